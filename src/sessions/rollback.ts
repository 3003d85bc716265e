// rollback: a new branch forked at a checkpoint becomes current; the original is untouched; the world follows.
import { verifyCheckpointAnchor } from "./log/verified-read.js";
import type { BaseMoveSpec, WithinMove } from "./moves/move-spec.js";
import type { MoveOptions } from "../models/inputs.js";
import type { MoveResult } from "../models/types.js";
import type { SessionRow, Step, Tx } from "../store/port/index.js";
import type { BlockOwn } from "./core/block-scope.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { sessionCheckpointAnchor } from "./core/owned.js";
import { GENESIS_HASH } from "./integrity/hashes.js";
import { forkedBranch } from "./log/forked-branch.js";
import { graphStays } from "./moves/graph-stays.js";
import { isSessionPosition } from "./moves/history.js";
import { performMove } from "./moves/move.js";
import { beforeFailedWrites } from "./moves/continued.js";

export async function rollback(
  ctx: EngineContext,
  ref: SessionRef,
  checkpointId: string,
  options?: MoveOptions,
  within?: WithinMove,
  reach: { expired?: boolean; unrecorded?: true; block?: BlockOwn } = {},
): Promise<MoveResult> {
  const now = reach.expired ? Number.NEGATIVE_INFINITY : undefined;
  const prepare = (tx: Tx, session: SessionRow) => rollbackSpec(ctx, tx, session, checkpointId, now, reach.unrecorded, reach.block);
  return performMove(ctx, ref, "rollback", options, prepare, within, { verb: "rollback", args: checkpointId });
}

/**
 * A rollback's move, read and checked in the move's transaction: the checkpoint's checksum and anchor verified. With
 * `asOf` -Infinity an expired (not yet pruned) checkpoint is a target too: a guarded block's own, expired by retention
 * (whose rollback is `unrecorded`: not the user's move).
 */
function* rollbackSpec(
  ctx: EngineContext,
  tx: Tx,
  session: SessionRow,
  checkpointId: string,
  asOf?: number,
  unrecorded?: true,
  block?: BlockOwn,
): Step<BaseMoveSpec> {
  const read = yield* sessionCheckpointAnchor(tx, session, checkpointId, asOf ?? ctx.now());
  const cp = read.checkpoint;
  const verified = yield* verifyCheckpointAnchor(tx, cp, read);
  // A failed block's checkpoint among the writes of another failed block (which began before it): forked before them.
  const earlier = unrecorded ? yield* beforeFailedWrites(tx, cp.branchId, cp.position, cp.createdAt) : undefined;
  const anchor = earlier ? (earlier.entryId ? yield* tx.getEntry(earlier.entryId) : undefined) : verified.anchor;
  const target = earlier ? { branchId: earlier.branchId, position: earlier.position } : { branchId: cp.branchId, position: cp.position };
  const fork = earlier
    ? { entryId: earlier.entryId, checkpointId: earlier.checkpointId }
    : { entryId: anchor?.id ?? null, checkpointId: cp.id };
  return {
    kind: "rollback",
    sessionId: session.id,
    userId: session.userId,
    target,
    // A rollback to where the session is (clicked twice, nothing written since) keeps its branch: no empty fork. A
    // LangGraph thread resumed there without a message or call has moved on, though: the rollback brings it back.
    sameAsWorld: (yield* isSessionPosition(tx, session, target)) && (yield* graphStays(tx, session, cp, anchor?.hash ?? GENESIS_HASH)),
    newBranch: forkedBranch(session.id, { parentId: target.branchId, position: target.position, ...fork }),
    edit: null,
    ...(unrecorded ? { unrecorded } : {}),
    ...(unrecorded && block ? { blockBranches: [...block.branches], blockMoves: block.stack } : {}),
    ...(unrecorded && block?.requests.get(session.id)?.size ? { blockRequests: [...block.requests.get(session.id)!] } : {}),
    ...(unrecorded && block?.starts.size ? { blockStarts: Object.fromEntries(block.starts) } : {}),
  };
}
