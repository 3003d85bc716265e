// Messages as entry fields, validated before any write (bad input leaves nothing behind), and the options of a write
// of messages (append, turn).
import { PayloadTooLargeError } from "../../models/errors.js";
import { appendOptions, messageInput, parseInput, parseOptions, type AppendOptions } from "../../models/inputs.js";
import { readingInput, toJsonText } from "../../models/json.js";
import type { MessageInput } from "../../models/types.js";
import type { EngineContext } from "../core/context.js";
import type { EntryFields } from "../log/writer.js";
import { quickRequest } from "../requests/ledger.js";

/** Validates messages into entry fields before any write, so bad input leaves nothing behind. */
export function messageFields(ctx: EngineContext, input: unknown, field: string): EntryFields {
  const m = parseInput(messageInput, input, field);
  return {
    kind: "message",
    role: m.role,
    content: toJsonText(m.content, `${field}.content`, ctx.limits),
    clientId: m.clientId ?? null,
    metadata: m.metadata == null ? null : toJsonText(m.metadata, `${field}.metadata`, ctx.limits),
  };
}

/** One message or an array of them, validated into entry fields (at most `maxBatch`). */
export function batchFields(ctx: EngineContext, input: MessageInput | MessageInput[]): EntryFields[] {
  const many = readingInput(() => Array.isArray(input), "messages");
  const list: unknown[] = many ? (input as unknown[]) : [input];
  if (list.length > ctx.limits.maxBatch) {
    throw new PayloadTooLargeError(
      "messages",
      `at most ${ctx.limits.maxBatch} messages per call (got ${list.length})`,
      ctx.limits.maxBatch,
    );
  }
  return list.map((m, i) => messageFields(ctx, m, many ? `messages[${i}]` : "message"));
}

/** `append` and `turn`'s last argument, validated (nothing to validate without one, little with `{ requestId }` alone). */
export function appendControlOf(options: AppendOptions | undefined): AppendOptions {
  return options === undefined ? {} : (quickRequest(options) ?? parseOptions(appendOptions, options, "options"));
}
