// One chat: useChat streams the answers; versions, undo/redo and rollback are forkpoint moves that return the new view.
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport } from "ai";
import { useEffect, useMemo, useRef, useState, type FormEvent } from "react";
import { api, type ChatView, type Move } from "./api";
import { MessageItem } from "./MessageItem";

interface Props {
  view: ChatView;
  onView: (view: ChatView) => void;
  onError: (error: unknown) => void;
}

export function Chat({ view, onView, onError }: Props) {
  // Each request says where the page shows the chat (its branch and head): the server refuses it (SESSION_MOVED) once
  // another tab moved the chat or asked on in it.
  const shown = useRef({ branchId: view.branchId, head: view.head });
  shown.current = { branchId: view.branchId, head: view.head };
  const transport = useMemo(() => new DefaultChatTransport({ body: () => ({ at: shown.current }) }), []);
  const { messages, sendMessage, regenerate, setMessages, status, stop, error, clearError } = useChat({
    id: view.id,
    messages: view.messages,
    transport,
    // Refused because another tab moved the chat: show it as it is now (the question was not saved), and say why.
    onError: (e) => {
      if (!e.message.includes("SESSION_MOVED")) return;
      void api.view(view.id).then((now) => {
        onView(now);
        clearError();
        onError(new Error("This chat changed in another tab: here it is as it is now. Nothing was sent: ask again."));
      }, onError);
    },
    // The answer is saved before its stream ends: the chat read now has it, with its versions. (A stopped answer is
    // saved as the server's stream is cancelled, maybe after this: the page keeps what it shows.)
    // ai@7 calls onFinish after an error too: a refused request is onError's to handle (reading the chat here as well
    // would race it and clear the message it shows).
    onFinish: ({ isAbort, isError }) => {
      if (!isAbort && !isError) void api.view(view.id).then(onView, onError);
    },
  });
  // A move (or a finished answer) brings the chat as stored: useChat shows that from then on.
  useEffect(() => setMessages(view.messages), [view, setMessages]);
  const [input, setInput] = useState("");
  const busy = status === "submitted" || status === "streaming";
  // Each move with where the page shows the chat too: refused (SESSION_MOVED) once another tab moved it, and the page
  // then reads the chat again.
  const move = (name: Move, body?: object) =>
    api.move(view.id, name, { at: shown.current, ...body }).then(onView, (e: unknown) => {
      if ((e as { code?: string }).code !== "SESSION_MOVED") return onError(e);
      void api.view(view.id).then((now) => {
        onView(now);
        onError(new Error("This chat changed in another tab: here it is as it is now. Nothing was done: try again."));
      }, onError);
    });

  const send = (e: FormEvent) => {
    e.preventDefault();
    // One answer at a time: a question sent mid-stream would cut the answer short and hide it as a version.
    if (!input.trim() || busy) return;
    void sendMessage({ text: input });
    setInput("");
  };

  return (
    <div className="chat" data-status={status}>
      <header>
        <h1>{view.title || "New chat"}</h1>
        <button disabled={busy} onClick={() => move("undo")}>
          Undo
        </button>
        <button disabled={busy} onClick={() => move("redo")}>
          Redo
        </button>
        <button disabled={busy} onClick={() => move("checkpoints", { name: `${messages.length} messages` })}>
          Checkpoint
        </button>
      </header>
      <ol className="messages">
        {messages.map((m) => (
          <MessageItem
            key={m.id}
            message={m}
            versions={view.versions[m.id]}
            busy={busy}
            onPick={(branchId) => move("switch", { branchId })}
            onEdit={(text) => void sendMessage({ text, messageId: m.id })}
            onRegenerate={() => void regenerate({ messageId: m.id })}
          />
        ))}
      </ol>
      {error && (
        <p className="error" role="alert">
          {error.message}
        </p>
      )}
      <form className="composer" onSubmit={send}>
        <input
          value={input}
          onChange={(e) => setInput(e.target.value)}
          placeholder="Ask something, or “add buy milk”"
          aria-label="Message"
        />
        {busy ? (
          <button type="button" onClick={() => void stop()}>
            Stop
          </button>
        ) : (
          <button type="submit">Send</button>
        )}
      </form>
      <aside>
        <h2>Checkpoints</h2>
        <ul className="checkpoints">
          {view.checkpoints.map((cp) => (
            <li key={cp.id}>
              {cp.name ?? "checkpoint"}{" "}
              <button disabled={busy} onClick={() => move("rollback", { checkpointId: cp.id })}>
                Roll back
              </button>
            </li>
          ))}
        </ul>
        <h2>To-do list</h2>
        <p className="hint">Written by the model's add_todo tool; forkpoint takes it back on undo, edit, regenerate and rollback.</p>
        <ul className="todos">
          {view.todos.map((t) => (
            <li key={t.id} data-id={t.id}>
              {t.text}
            </li>
          ))}
        </ul>
      </aside>
    </div>
  );
}
