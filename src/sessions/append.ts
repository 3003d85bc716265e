// append: add one or many messages to the current branch (or after a given message), in one transaction.
import type { AppendOptions } from "../models/inputs.js";
import type { Message, MessageInput } from "../models/types.js";
import type { Step, Tx } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import type { EntryFields } from "./log/writer.js";
import { messagesAnswer, wroteMessages, type MessagesRange } from "./requests/answers.js";
import { applyOnce, writtenRequestOf } from "./requests/ledger.js";
import { appendWhere } from "./writes/append-where.js";
import { appendControlOf, batchFields } from "./writes/message-fields.js";

/** A retried append's arguments are the first's when its messages are what the first wrote. */
function* sameMessages(tx: Tx, answer: string, fields: readonly EntryFields[]): Step<boolean> {
  return yield* wroteMessages(tx, JSON.parse(answer) as MessagesRange, fields);
}

export async function append(
  ctx: EngineContext,
  ref: SessionRef,
  input: MessageInput | MessageInput[],
  options?: AppendOptions,
): Promise<Message[]> {
  const fields = batchFields(ctx, input);
  const { requestId, ifAt, after } = appendControlOf(options);
  // A retry is told apart by what the first call wrote (no hash of the messages on the way in); `after` is an argument
  // the messages do not hold.
  const request = writtenRequestOf(requestId, after === undefined ? "append" : `append>${after}`, messagesAnswer, sameMessages, fields);
  return applyOnce(ctx, ref, request, async () => (await appendWhere(ctx, ref, fields, { request, ifAt, after }))!);
}
