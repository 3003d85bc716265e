// clone: a copy of a whole session (history, states, branch tree, checkpoints) under new ids, for the same user.
// Built on export and import: the copy is checked as any import is, and nothing of it is applied (no tool runs).
import { newId } from "../models/ids.js";
import { idSchema, parseInput, parseOptions, userScope } from "../models/inputs.js";
import type { CheckpointRow, Step, Tx } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession } from "./core/owned.js";
import { toCheckpoint } from "./core/rows.js";
import { exportDocument, type MarkAt } from "./export-session.js";
import { importUnit, prepareImport } from "./import-session.js";
import { checkpointChecksum } from "./integrity/hashes.js";
import { stateHashOf } from "./log/writer.js";
import { rewriteIds } from "./transfer/rewrite-ids.js";

/**
 * Copies the session exactly as it is at one moment: every branch, entry, state and checkpoint under new ids, their
 * hashes recomputed, and a checkpoint named "clone" (metadata `{ cloneId }`) at the source's current head of that
 * moment, in the source and (as the newest checkpoint) in the copy. The copy's `info().origin` is
 * `{ sessionId: source, checkpointId: the mark }`, as a handoff's is; its current branch is the source's; its tool
 * calls are history only (none is applied in the copy, so a move never undoes the source's world), and a call still
 * running at that moment is running in it. The mark and the copy are written in one transaction: a clone that fails
 * leaves nothing behind. The mark weighs no retention policy (it would expire what is being copied) and, as an
 * automatic checkpoint, captures no workspace files.
 */
export async function clone(ctx: EngineContext, sessionId: unknown, scope: unknown): Promise<SessionRef> {
  const id = parseInput(idSchema, sessionId, "sessionId");
  const { userId } = parseOptions(userScope, scope, "scope");
  const cloneId = newId("ses");
  const markAt: MarkAt = (tx, at) => cloneMark(tx, ctx, at, userId, cloneId);
  const { doc, mark } = await exportDocument(ctx, id, { userId }, markAt);
  const copy = rewriteIds(doc, cloneId, ctx.now());
  copy.session.origin = { sessionId: id, checkpointId: mark!.id };
  const prepared = await prepareImport(ctx, copy, { userId });
  const { ref, written } = await ctx.store.write({ sessionIds: [id, cloneId] }, (tx) =>
    writeCloneUnit(tx, ctx, id, userId, mark!, prepared),
  );
  prepared.call.finish();
  ctx.events.emit("checkpoint", toCheckpoint(written));
  return ref;
}

/** The "clone" checkpoint at the source's current head, made in the export's first read. */
function* cloneMark(tx: Tx, ctx: EngineContext, at: Parameters<MarkAt>[1], userId: string, cloneId: string): Step<CheckpointRow> {
  const { session, branch, head } = at;
  const row: CheckpointRow = {
    seq: 0,
    id: newId("cp"),
    sessionId: session.id,
    branchId: branch.id,
    position: head.position,
    name: "clone",
    auto: false,
    metadata: JSON.stringify({ cloneId }),
    userId,
    headHash: head.hash,
    createdAt: Math.max(ctx.now(), yield* tx.lastCheckpointAt(userId, session.id)),
    expiresAt: null,
    stateId: head.stateId,
    checksum: "",
  };
  row.checksum = checkpointChecksum(row, yield* stateHashOf(tx, head.stateId));
  return row;
}

/** The mark in the source and the copy, in one transaction: a clone that fails leaves nothing behind. */
function* writeCloneUnit(
  tx: Tx,
  ctx: EngineContext,
  id: string,
  userId: string,
  mark: CheckpointRow,
  prepared: Awaited<ReturnType<typeof prepareImport>>,
) {
  yield* ownedSession(tx, id, userId); // deleted meanwhile: no copy of it
  // Never before the source's newest checkpoint (one made meanwhile may be newer than the mark's first time).
  const createdAt = Math.max(mark.createdAt, yield* tx.lastCheckpointAt(userId, id));
  const written = { ...mark, createdAt };
  if (createdAt !== mark.createdAt) written.checksum = checkpointChecksum(written, yield* stateHashOf(tx, written.stateId));
  yield* tx.insertCheckpoint(written, createdAt);
  return { ref: yield* importUnit(tx, prepared, ctx), written };
}
