// The page's calls to the server's API (besides useChat's own POST /api/chat).
import type { ChatView } from "../server/chat-view";
import type { SidebarRow } from "../server/sidebar";

export type { ChatView, SidebarRow };
export type Move = "switch" | "undo" | "redo" | "checkpoints" | "rollback";

async function call<T>(method: "GET" | "POST", path: string, body?: object): Promise<T> {
  const res = await fetch(path, {
    method,
    ...(body ? { headers: { "content-type": "application/json" }, body: JSON.stringify(body) } : {}),
  });
  const data = (await res.json()) as T & { code?: string; message?: string };
  // forkpoint's error code (SESSION_MOVED, ...) goes with the error, as `code`.
  if (!res.ok) throw Object.assign(new Error(data.message ?? res.statusText), { code: data.code });
  return data;
}

export const api = {
  sessions: () => call<SidebarRow[]>("GET", "/api/sessions"),
  create: () => call<ChatView>("POST", "/api/sessions"),
  view: (id: string) => call<ChatView>("GET", `/api/sessions/${id}`),
  // A fresh requestId per click: a double click or a retried request moves the chat once.
  move: (id: string, move: Move, body: object = {}) =>
    call<ChatView>("POST", `/api/sessions/${id}/${move}`, { requestId: crypto.randomUUID(), ...body }),
};
