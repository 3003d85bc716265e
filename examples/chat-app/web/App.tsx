// The page: the user's chats in a sidebar, the open one beside it (its id in the URL's hash, so a reload keeps it).
import { useCallback, useEffect, useRef, useState } from "react";
import { api, type ChatView, type SidebarRow } from "./api";
import { Chat } from "./Chat";

export function App() {
  const [rows, setRows] = useState<SidebarRow[]>([]);
  const [view, setView] = useState<ChatView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const fail = useCallback((e: unknown) => setError(e instanceof Error ? e.message : String(e)), []);
  // Reads of the sidebar can finish out of order: only the latest one asked for is shown, and the list is busy till then.
  const asked = useRef(0);
  const [loading, setLoading] = useState(true);
  const refresh = useCallback(() => {
    const n = ++asked.current;
    setLoading(true);
    const settle = () => n === asked.current && setLoading(false);
    return api.sessions().then(
      (list) => {
        if (n === asked.current) setRows(list);
        settle();
        return list;
      },
      (e: unknown) => {
        settle();
        fail(e);
        return [] as SidebarRow[];
      },
    );
  }, [fail]);

  const show = useCallback(
    (next: ChatView) => {
      setError(null);
      setView(next);
      history.replaceState(null, "", `#${next.id}`);
      void refresh();
    },
    [refresh],
  );
  const open = useCallback((id: string) => api.view(id).then(show, fail), [show, fail]);
  const newChat = useCallback(() => api.create().then(show, fail), [show, fail]);

  // The chat in the URL, else the newest one; none yet: the "New chat" button makes one.
  useEffect(() => {
    const id = location.hash.slice(1);
    if (id) void open(id);
    else
      void refresh().then((list) => {
        if (list[0]) void open(list[0].id);
      });
  }, [open, refresh]);

  return (
    <div className="app">
      <nav className="sidebar" aria-label="Chats" aria-busy={loading}>
        <button onClick={newChat}>New chat</button>
        <ul>
          {rows.map((row) => (
            <li key={row.id}>
              <button className={row.id === view?.id ? "current" : ""} onClick={() => open(row.id)}>
                <strong>{row.title || "New chat"}</strong> <span className="count">{row.messageCount}</span>
                <span className="preview">{row.preview || "No messages yet"}</span>
              </button>
            </li>
          ))}
        </ul>
      </nav>
      <main>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        {view ? <Chat key={view.id} view={view} onView={show} onError={fail} /> : <p className="empty">No chat open: start a new one.</p>}
      </main>
    </div>
  );
}
