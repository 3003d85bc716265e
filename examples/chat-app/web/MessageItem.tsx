// One message: its text and tool calls, the `< 2/3 >` picker of its versions, and Edit (questions) or Regenerate (answers).
import { getToolName, isToolUIPart, type UIMessage } from "ai";
import { useState, type FormEvent } from "react";
import type { ChatView } from "./api";

interface Props {
  message: UIMessage;
  versions: ChatView["versions"][string] | undefined;
  busy: boolean;
  onPick: (branchId: string) => void;
  onEdit: (text: string) => void;
  onRegenerate: () => void;
}

const textOf = (m: UIMessage) => m.parts.map((p) => (p.type === "text" ? p.text : "")).join("");

export function MessageItem({ message, versions, busy, onPick, onEdit, onRegenerate }: Props) {
  const [draft, setDraft] = useState<string | null>(null);
  const save = (e: FormEvent) => {
    e.preventDefault();
    if (draft?.trim()) onEdit(draft);
    setDraft(null);
  };

  return (
    <li
      className={`message ${message.role}`}
      data-role={message.role}
      data-versions={versions && `${versions.index + 1}/${versions.count}`}
    >
      {draft !== null ? (
        <form onSubmit={save}>
          <textarea value={draft} onChange={(e) => setDraft(e.target.value)} aria-label="Edit message" />
          <button type="submit">Save</button>
          <button type="button" onClick={() => setDraft(null)}>
            Cancel
          </button>
        </form>
      ) : (
        <div className="body">
          {message.parts.map((part, i) =>
            part.type === "text" ? (
              <p key={i}>{part.text}</p>
            ) : isToolUIPart(part) ? (
              <p key={i} className="tool">
                {getToolName(part)}({JSON.stringify(part.input)}) {part.state === "output-available" ? "✓" : "…"}
              </p>
            ) : null,
          )}
        </div>
      )}
      <div className="actions">
        {versions && versions.count > 1 && (
          <span className="versions">
            <button
              aria-label="Previous version"
              disabled={busy || versions.index === 0}
              onClick={() => onPick(versions.branchIds[versions.index - 1]!)}
            >
              ‹
            </button>
            {versions.index + 1}/{versions.count}
            <button
              aria-label="Next version"
              disabled={busy || versions.index === versions.count - 1}
              onClick={() => onPick(versions.branchIds[versions.index + 1]!)}
            >
              ›
            </button>
          </span>
        )}
        {draft === null && message.role === "user" && (
          <button disabled={busy} onClick={() => setDraft(textOf(message))}>
            Edit
          </button>
        )}
        {message.role === "assistant" && (
          <button disabled={busy} onClick={onRegenerate}>
            Regenerate
          </button>
        )}
      </div>
    </li>
  );
}
