// append: add one or many messages to the current branch, in one transaction.
import { ValidationError } from "../models/errors.js";
import { messageInput, parseInput } from "../models/inputs.js";
import { toJsonText } from "../models/json.js";
import type { Checkpoint, Message, MessageInput } from "../models/types.js";
import type { EngineContext, SessionRef } from "./context.js";
import { autoCheckpointAfterMessage, writeEntry, type EntryFields } from "./log-writer.js";
import { headOfEntry } from "./lineage.js";
import { ownedCurrent } from "./ownership.js";
import { toCheckpoint, toMessage } from "./rows.js";

/** Validates messages into entry fields before any write, so bad input leaves nothing behind. */
export function messageFields(ctx: EngineContext, input: unknown, field: string): EntryFields {
  const m = parseInput(messageInput, input, field);
  return {
    kind: "message",
    role: m.role,
    content: toJsonText(m.content, `${field}.content`, ctx.limits),
    clientId: m.clientId ?? null,
    metadata: m.metadata === undefined ? null : toJsonText(m.metadata, `${field}.metadata`, ctx.limits),
  };
}

export async function append(ctx: EngineContext, ref: SessionRef, input: MessageInput | MessageInput[]): Promise<Message[]> {
  const list: unknown[] = Array.isArray(input) ? input : [input];
  if (list.length > ctx.limits.maxBatch) {
    throw new ValidationError("messages", `at most ${ctx.limits.maxBatch} messages per append (got ${list.length})`);
  }
  const fields = list.map((m, i) => messageFields(ctx, m, Array.isArray(input) ? `messages[${i}]` : "message"));
  const checkpoints: Checkpoint[] = [];
  const messages = await ctx.store.write(() => {
    const current = ownedCurrent(ctx.store, ref.id, ref.userId);
    const { session, branch } = current;
    let head = current.head;
    const out: Message[] = [];
    for (const f of fields) {
      const row = writeEntry(ctx, branch.id, head, f);
      head = headOfEntry(row);
      out.push(toMessage(row));
      const auto = autoCheckpointAfterMessage(ctx, session, row);
      if (auto) checkpoints.push(toCheckpoint(auto));
    }
    return out;
  });
  for (const cp of checkpoints) ctx.events.emit("checkpoint", cp);
  return messages;
}
