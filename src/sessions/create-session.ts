// createSession: an external session and its root branch, owned by one user (also used to seed a handoff).
import type { Step, Tx } from "../store/port/index.js";
import { newId } from "../models/ids.js";
import { createSessionInput, parseOptions, type CreateSessionInput } from "../models/inputs.js";
import { toJsonText } from "../models/json.js";
import type { EngineContext, SessionRef } from "./core/context.js";

/** Writes a session row and its root branch inside the caller's write transaction. */
export function* writeNewSession(
  ctx: EngineContext,
  tx: Tx,
  fields: { userId: string; title: string | null; metadata: string | null; origin?: { sessionId: string; checkpointId: string } },
  id = newId("ses"),
): Step<{ id: string; branchId: string }> {
  const now = ctx.now();
  const branchId = newId("br");
  yield* tx.insertSession({
    id,
    userId: fields.userId,
    title: fields.title,
    metadata: fields.metadata,
    currentBranchId: branchId,
    originSessionId: fields.origin?.sessionId ?? null,
    originCheckpointId: fields.origin?.checkpointId ?? null,
    createdAt: now,
    updatedAt: now,
  });
  yield* tx.insertBranch({
    id: branchId,
    sessionId: id,
    parentId: null,
    forkCheckpointId: null,
    forkPosition: 0,
    forkEntryId: null,
    name: null,
    reason: "root",
    createdAt: now,
  });
  return { id, branchId };
}

/** Validates `createSession`-shaped input (also a handoff's target) before any write. */
export function newSessionFields(
  ctx: EngineContext,
  input: CreateSessionInput,
  where: string,
): { userId: string; title: string | null; metadata: string | null } {
  const o = parseOptions(createSessionInput, input, where);
  return { userId: o.userId, title: o.title ?? null, metadata: o.metadata == null ? null : toJsonText(o.metadata, "metadata", ctx.limits) };
}

export async function createSession(ctx: EngineContext, input: CreateSessionInput): Promise<SessionRef> {
  const fields = newSessionFields(ctx, input, "input");
  const id = newId("ses");
  await ctx.store.write({ sessionId: id }, (tx) => writeNewSession(ctx, tx, fields, id));
  return { id, userId: fields.userId };
}
