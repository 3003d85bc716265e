// clone: a copy of a whole session (history, states, branch tree, checkpoints) under new ids, for the same user.
// Built on export and import: the copy is checked as any import is, and nothing of it is applied (no tool runs).
import { newId } from "../models/ids.js";
import { idSchema, parseInput, parseOptions, userScope } from "../models/inputs.js";
import { createCheckpoint } from "./checkpoint.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { exportSession } from "./export-session.js";
import { importSession } from "./import-session.js";
import { rewriteIds } from "./transfer/rewrite-ids.js";

/**
 * Marks the source with a checkpoint named "clone" (metadata `{ cloneId }`), then copies the session as it is there:
 * every branch, entry, state and checkpoint (the mark too) under new ids, their hashes recomputed. The copy's
 * `info().origin` is `{ sessionId: source, checkpointId: the mark }`, as a handoff's is; its current branch is the
 * source's; its tool calls are history only (none is applied in the copy, so a move never undoes the source's world).
 */
export async function clone(ctx: EngineContext, sessionId: unknown, scope: unknown): Promise<SessionRef> {
  const id = parseInput(idSchema, sessionId, "sessionId");
  const { userId } = parseOptions(userScope, scope, "scope");
  const cloneId = newId("ses");
  // The mark weighs no retention policy: it would expire what is being copied, in the source and the copy.
  const mark = await createCheckpoint(ctx, { id, userId }, { name: "clone", metadata: { cloneId } }, { retain: false });
  const doc = await exportSession(ctx, id, { userId });
  const copy = rewriteIds(doc, cloneId, ctx.now());
  copy.session.origin = { sessionId: id, checkpointId: mark.id };
  return importSession(ctx, copy, { userId });
}
