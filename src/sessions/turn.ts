// turn: messages and a checkpoint after them, in one transaction (a chat turn).
import type { CheckpointInput, WriteOptions } from "../models/inputs.js";
import type { MessageInput, Turn } from "../models/types.js";
import { batchFields } from "./append.js";
import { checkpointAfter } from "./checkpoint.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { writeControlOf } from "./requests/ledger.js";

export async function turn(
  ctx: EngineContext,
  ref: SessionRef,
  input: MessageInput | MessageInput[],
  checkpoint?: CheckpointInput,
  options?: WriteOptions,
): Promise<Turn> {
  const messages = batchFields(ctx, input);
  const { requestId, ifAt } = writeControlOf(options);
  return checkpointAfter(ctx, ref, messages, checkpoint, {
    ifAt,
    ...(requestId === undefined ? {} : { request: { id: requestId, verb: "turn" } }),
  });
}
