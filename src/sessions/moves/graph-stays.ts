// Whether a rollback to where the session is leaves a LangGraph thread's head where it is (else the rollback forks).
import type { CheckpointRow, LgPointRow, SessionRow, Step, Tx } from "../../store/port/index.js";
import { pointsOnLineage } from "./points-on-lineage.js";
import { markSeq } from "./mark-seq.js";
import { RESUMED_ON, parseResumeMark } from "./resume-mark.js";
import { answersDiffer } from "./served-answers.js";

/** The newest of them (LangGraph's ids are time-ordered): what LangGraph itself reads as latest. */
function newest(points: LgPointRow[]): LgPointRow | undefined {
  return points.reduce<LgPointRow | undefined>((best, p) => (!best || p.checkpointId > best.checkpointId ? p : best), undefined);
}

/**
 * The LangGraph checkpoint a thread's head reads among `points` (those at one point of the tree) at a user's checkpoint
 * `at` (the one a branch forks from): that one when it is LangGraph's, else the newest written there up to it that is
 * not an input checkpoint; with no `at`, the newest of them. (The head's read: `checkpointAt` in src/langgraph.)
 */
function headAmong(points: LgPointRow[], at: CheckpointRow | undefined): LgPointRow | undefined {
  const own = at && points.find((p) => p.fpCheckpointId === at.id);
  return own ?? newest(points.filter((p) => p.source !== "input" && p.seq <= (at?.seq ?? Infinity)));
}

/**
 * For a rollback to `cp` whose position (hash-chain value `hash`) is the session's: true when its thread (if it has
 * one) reads the same LangGraph checkpoint as its head there as it would after the rollback. A step LangGraph resumed
 * there that added no message (a thread answering an interrupt) moved the thread on without moving the session, and so
 * did an answer stored there since `cp` was taken (a user's or LangGraph's own) that left the task asking again (no
 * step written since).
 */
export function* graphStays(tx: Tx, session: SessionRow, cp: CheckpointRow, hash: string): Step<boolean> {
  const points = (yield* tx.langgraph.pointsOf(session.id)).filter((p) => p.position === cp.position && p.headHash === hash);
  if (points.length === 0) return true;
  const branch = (yield* tx.getBranch(session.currentBranchId))!;
  const forkedFrom =
    branch.forkPosition === cp.position && branch.forkCheckpointId !== null ? yield* tx.getCheckpoint(branch.forkCheckpointId) : undefined;
  // Each read among its own lineage's checkpoints there: not those of a branch rolled back from that went on.
  const fromFork = forkedFrom ? yield* pointsOnLineage(tx, points, forkedFrom, cp.position) : points;
  const now = newest(points.filter((p) => p.branchId === branch.id)) ?? headAmong(fromFork, forkedFrom);
  if (now?.checkpointId !== headAmong(yield* pointsOnLineage(tx, points, cp, cp.position), cp)?.checkpointId) return false;
  // At a user's checkpoint (not LangGraph's own, which holds the step's writes as LangGraph's savers do).
  const users = !points.some((p) => p.fpCheckpointId === cp.id);
  // Answered there on another lineage than the current one (a rollback's branch reads its parent's answers there).
  if (now && users && (yield* answersDiffer(tx, session.id, now.checkpointId, branch, cp))) return false;
  // At a user's checkpoint, or LangGraph's own (an answer stored there was given once it was written): a resume from it
  // asks the task's first question again, as one from LangGraph's own savers does.
  return !now || !(yield* resumedSince(tx, session.id, now.checkpointId, branch.id, cp));
}

/**
 * Whether resume values were stored at LangGraph checkpoint `checkpointId` on `branchId` since `cp` was taken: their
 * mark names the session's newest checkpoint then, `cp` or a later one (an answer given before `cp` names an earlier),
 * by its seq (`markSeq`: kept in the mark once that checkpoint is gone).
 */
function* resumedSince(tx: Tx, sessionId: string, checkpointId: string, branchId: string, cp: CheckpointRow): Step<boolean> {
  const marks = (yield* tx.langgraph.writesOf(sessionId, checkpointId)).filter((w) => w.channel === RESUMED_ON);
  for (const w of marks) {
    const mark = parseResumeMark(w.value);
    if (mark.branchId === branchId && (yield* markSeq(tx, cp.sessionId, mark)) >= cp.seq) return true;
  }
  return false;
}
