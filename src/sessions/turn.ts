// turn: messages and a checkpoint after them, in one transaction (a chat turn).
import type { AppendOptions, CheckpointInput } from "../models/inputs.js";
import type { MessageInput, Turn } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { checkpointAfter } from "./writes/checkpoint-after.js";
import { appendControlOf, batchFields } from "./writes/message-fields.js";

export async function turn(
  ctx: EngineContext,
  ref: SessionRef,
  input: MessageInput | MessageInput[],
  checkpoint?: CheckpointInput,
  options?: AppendOptions,
): Promise<Turn> {
  const messages = batchFields(ctx, input);
  const { requestId, ifAt, after } = appendControlOf(options);
  return checkpointAfter(ctx, ref, messages, checkpoint, {
    ifAt,
    after,
    ...(requestId === undefined ? {} : { request: { id: requestId, verb: "turn" } }),
  });
}
