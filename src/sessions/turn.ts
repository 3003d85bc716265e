// turn: messages and a checkpoint after them, in one transaction (a chat turn).
import type { CheckpointInput } from "../models/inputs.js";
import type { MessageInput, Turn } from "../models/types.js";
import { batchFields } from "./append.js";
import { checkpointAfter } from "./checkpoint.js";
import type { EngineContext, SessionRef } from "./core/context.js";

export async function turn(
  ctx: EngineContext,
  ref: SessionRef,
  input: MessageInput | MessageInput[],
  checkpoint?: CheckpointInput,
): Promise<Turn> {
  return checkpointAfter(ctx, ref, batchFields(ctx, input), checkpoint);
}
