// A memory subgraph's place a move took back, resumed since: its tasks answered there on the root's branch ask on.
import type { LgThreadRow, Step, Tx } from "../store/port/index.js";
import { PUT_ON } from "./put-on.js";
import { resumedOnBranch, rootBranchOf } from "./resumed-on.js";
import type { MemoryPlace } from "./subgraph-memory.js";

/**
 * `place`, with the resume values given at its checkpoint since the move (`Resumed`): a `checkpointer: true`
 * subgraph's session is never moved, so its checkpoint a move of the root serves again stays the one its tasks wait at
 * (LangGraph writes no checkpoint while a task asks again in the same step). Its resume values stored on the root's
 * current branch, when the checkpoint was put on another (the move forked the root's session), are that branch's run's:
 * served, so a task asking twice asks on from them rather than its first question again.
 */
export function* resumedAtMemoryPlace(tx: Tx, parent: LgThreadRow, sessionId: string, place: MemoryPlace): Step<MemoryPlace> {
  if (place.undone !== "continuation" || !place.row) return place;
  const branchId = yield* rootBranchOf(tx, parent);
  const branch = branchId === undefined ? undefined : yield* tx.getBranch(branchId);
  if (!branch) return place;
  const mark = (yield* tx.langgraph.writesOf(sessionId, place.row.checkpointId)).find((w) => w.channel === PUT_ON);
  // Put with no mark: before the root's thread was stored (durability "exit"), on the root's first branch.
  const putOn = mark ? (JSON.parse(mark.value.toString("utf8")) as { branchId: string }).branchId : undefined;
  if (mark ? putOn === branch.id : branch.parentId === null) return place;
  const fresh = yield* resumedOnBranch(tx, sessionId, place.row.checkpointId, branch.id);
  return fresh.size === 0 ? place : { ...place, undone: { fresh } };
}
