// treeView: what the web view draws of a session, read in one transaction, so that every part describes one state of it.
import type { Branch, Checkpoint, SessionInfo, ToolInvocation } from "../models/types.js";
import type { Tx } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession } from "./core/owned.js";
import { toBranch, toCheckpoint, toSessionInfo, toToolInvocation } from "./core/rows.js";
import { lineageTools } from "./log/lineage.js";

/** @internal The web view's tree of a session (`forkpoint ui`'s `/api/session`). */
export interface TreeView {
  info: SessionInfo;
  branches: Branch[];
  /** The current lineage's tool calls (applied or not). */
  toolTrack: ToolInvocation[];
  /**
   * The tool calls applied in the session's world, oldest application first: the current lineage's applied calls and
   * any applied off it (`invoke` with `after` once the session moved on), which a rollback would undo as well.
   */
  world: ToolInvocation[];
  /** Each branch's newest checkpoints, at most `perBranch` of each (the rest are listed page by page). */
  checkpoints: Checkpoint[];
  /** The branches that have more checkpoints than `checkpoints` holds. */
  moreCheckpoints: string[];
  /** The session's checkpoints, all branches together. */
  checkpointCount: number;
}

/**
 * @internal The session's info, branches, tool track and newest checkpoints in one read transaction: another server
 * moving the session between separate reads would make the current branch of `info` and of `branches` disagree.
 * Bounded at any size: `perBranch` checkpoints of each branch, read by index.
 */
export async function treeView(ctx: EngineContext, ref: SessionRef, perBranch: number): Promise<TreeView> {
  return ctx.store.read((tx) => treeViewUnit(tx, ctx, ref, perBranch));
}

function* treeViewUnit(tx: Tx, ctx: EngineContext, ref: SessionRef, perBranch: number) {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  const info = toSessionInfo((yield* tx.getSessionInfo(session.id))!);
  const heads = yield* tx.branchHeads(session.id);
  const rows = yield* tx.listBranches(session.id);
  const branches = rows.map((b) => toBranch(b, Math.max(heads.get(b.id) ?? 0, b.forkPosition), session.currentBranchId));
  const toolTrack = (yield* lineageTools(tx, session.currentBranchId)).map(toToolInvocation);
  const world = (yield* tx.appliedTools(session.id)).map(toToolInvocation).reverse();
  const now = ctx.now();
  // One more than shown: whether a branch has more.
  const listed = yield* tx.newestPerBranch(
    ref.userId,
    rows.map((b) => b.id),
    now,
    perBranch + 1,
  );
  const shown = new Map<string, number>();
  const checkpoints: Checkpoint[] = [];
  const more = new Set<string>();
  for (const row of listed) {
    const n = (shown.get(row.branchId) ?? 0) + 1;
    shown.set(row.branchId, n);
    if (n <= perBranch) checkpoints.push(toCheckpoint(row));
    else more.add(row.branchId);
  }
  const checkpointCount = yield* tx.countCheckpoints(ref.userId, session.id, now);
  return { info, branches, toolTrack, world, checkpoints, moreCheckpoints: [...more], checkpointCount };
}
