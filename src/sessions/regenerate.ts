// regenerate: a new answer to the same question, as a new version of an assistant message (an edit keeping its role).
import { parseInput, regenerateInput, type EditOptions } from "../models/inputs.js";
import type { EditResult, RegenerateInput } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { assistantOnly, editFields, editWith } from "./edit.js";

export async function regenerate(
  ctx: EngineContext,
  ref: SessionRef,
  messageId: string,
  answer: RegenerateInput,
  options?: EditOptions,
): Promise<EditResult> {
  // The role comes from the message it replaces: one given here is refused as an unknown key.
  const fields = editFields(ctx, parseInput(regenerateInput, answer, "answer"), "answer");
  return editWith(ctx, ref, messageId, { ...fields, role: "assistant" }, options, undefined, assistantOnly, "regenerate");
}
