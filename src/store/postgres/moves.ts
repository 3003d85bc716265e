// The applied set and the move journal, whose owners hold leases: PostgreSQL's statements and the port's MovesTx.
import type {
  AppliedCall,
  BranchContinuation,
  MoveEnds,
  MoveHistoryRow,
  MoveRow,
  MoveStepRow,
  MoveStepStatus,
  MovesTx,
  NewMove,
  Owner,
  SetAsideCall,
  Step,
  ToolRow,
} from "../port/index.js";
import { redoColumn, sameStack, stackAfter, type MoveStack } from "../port/move-stack.js";
import { BRANCH_MOVE_COLS, DB_NOW_MS, FORGET_UNDONE, HISTORY_COLS, MOVE_COLS, STEP_COLS, TOOL_COLS } from "./columns.js";
import { insertRow, insertWith } from "./batch.js";
import type { Sql } from "./sql.js";

/** The move ($id) is still its owner's ($pid, and $pid + 1 its pid start): `IS NOT DISTINCT FROM` as SQLite's `IS`. */
const heldBy = (id: number, pid: number) => `id = $${id} AND pid = $${pid} AND pid_start IS NOT DISTINCT FROM $${pid + 1}::text`;

/** A lease of $n ms from now, by the database's clock (null when $n is null: no lease). */
const leaseFor = (n: number) => `${DB_NOW_MS} + $${n}::float8`;

function* stackOf(sql: Sql, sessionId: string): Step<MoveStack> {
  const [row] = yield* sql.tuples<[string | null, string | null]>(`SELECT move_top, move_redo FROM sessions WHERE id = $1`, [sessionId]);
  return { top: row?.[0] ?? null, redo: row?.[1] ? (JSON.parse(row[1]) as string[]) : [] };
}

// A ref is a string (a move journaled before the stack named its row by a number: nothing is found for it).
function* moveAt(sql: Sql, ref: string): Step<MoveHistoryRow | undefined> {
  if (typeof ref !== "string") return undefined;
  return ref.startsWith("m:")
    ? yield* sql.one<MoveHistoryRow>(`SELECT ${HISTORY_COLS} FROM move_history WHERE seq = $1`, [Number(ref.slice(2))])
    : yield* sql.one<MoveHistoryRow>(`SELECT ${BRANCH_MOVE_COLS} FROM branches WHERE id = $1 AND move_kind IS NOT NULL`, [ref]);
}

/** A re-application takes a new applied_seq: `excluded` holds the identity the proposed row drew. */
const MARK_APPLIED = insertRow("applied", ["entry_id", "session_id", "result", "applied_at"], {
  tail: `ON CONFLICT (entry_id) DO UPDATE SET session_id = excluded.session_id, result = excluded.result,
    applied_seq = excluded.applied_seq, applied_at = excluded.applied_at`,
});
/** One per application: the current one's (0 when not applied) replaces any kept for it before. */
const KEEP_REPLAY = `INSERT INTO replay_results (entry_id, session_id, applied_seq, result, replayed_at)
  VALUES ($1, $2, coalesce((SELECT applied_seq FROM applied WHERE entry_id = $1), 0), $3, $4)
  ON CONFLICT (entry_id, applied_seq) DO UPDATE SET session_id = excluded.session_id, result = excluded.result, replayed_at = excluded.replayed_at`;
const INSERT_MOVE = insertRow(
  "moves",
  ["id", "session_id", "kind", "spec", "status", "pid", "pid_start", "lease_until", "created_at", "finished_at"],
  { expr: { lease_until: (p) => `${DB_NOW_MS} + ${p}::float8` } },
);
/** Every step of a move in one statement: columns as arrays. */
const INSERT_STEPS = insertWith(
  "move_steps",
  (p) => `INSERT INTO move_steps (move_id, idx, op, entry_id, status, result, error)
  SELECT * FROM unnest(${p(1)}::text[], ${p(2)}::int[], ${p(3)}::text[], ${p(4)}::text[], ${p(5)}::text[], ${p(6)}::text[], ${p(7)}::text[])`,
);

/** This file's statements, named for the methods that run them. */
const s = {
  appliedTools: `SELECT ${TOOL_COLS} FROM applied a JOIN entries e ON e.id = a.entry_id LEFT JOIN tool_results r ON r.entry_id = e.id
    WHERE a.session_id = $1 ORDER BY a.applied_seq DESC`,
  appliedCalls: `SELECT e.id, e.branch_id AS "branchId", e.position FROM applied a JOIN entries e ON e.id = a.entry_id
    WHERE a.session_id = $1 ORDER BY a.applied_seq DESC`,
  unmarkApplied: `DELETE FROM applied WHERE entry_id = $1`,
  // One row per call and branch (set aside on two branches, it stays out of both): set aside again there, replaced.
  setAside: `INSERT INTO set_aside (entry_id, session_id, branch_id, position, set_at) VALUES ($1, $2, $3, $4, $5)
    ON CONFLICT (entry_id, branch_id) DO UPDATE SET session_id = excluded.session_id,
    position = excluded.position, set_at = excluded.set_at`,
  unsetAside: `DELETE FROM set_aside WHERE entry_id = $1`,
  unsetAsideThrough: `DELETE FROM set_aside WHERE entry_id = $1 AND (branch_id = '' OR branch_id = ANY($2::text[]))`,
  setAsideCalls: `SELECT entry_id AS id, nullif(branch_id, '') AS "branchId", position FROM set_aside WHERE session_id = $1 ORDER BY entry_id, branch_id`,
  // The kept result, else (a replay recorded before results were kept) the journal's newest: one round trip.
  lastReplay: `SELECT result FROM ((SELECT 0 AS k, result FROM replay_results WHERE session_id = $1 AND entry_id = $2
    ORDER BY applied_seq DESC LIMIT 1)
    UNION ALL (SELECT 1, s.result FROM move_steps s JOIN moves m ON m.id = s.move_id
      WHERE m.session_id = $1 AND s.entry_id = $2 AND s.op = 'replay' AND s.status = 'done' ORDER BY m.seq DESC, s.idx DESC LIMIT 1)) r
    ORDER BY k LIMIT 1`,
  replayResult: `SELECT result FROM replay_results WHERE entry_id = $1 AND applied_seq = $2::bigint`,
  replayedApplications: `SELECT a.entry_id AS "entryId", a.applied_seq AS "appliedSeq" FROM applied a WHERE a.session_id = $1
    AND EXISTS (SELECT 1 FROM replay_results r WHERE r.entry_id = a.entry_id AND r.applied_seq = a.applied_seq) ORDER BY a.applied_seq`,
  uncertainInvocations: `SELECT DISTINCT s.entry_id FROM move_steps s JOIN moves m ON m.id = s.move_id WHERE m.session_id = $1 AND s.status = 'unknown'`,
  uncertainCalls: `SELECT DISTINCT entry_id FROM move_steps WHERE status = 'unknown'`,
  unknownSteps: `SELECT ${STEP_COLS} FROM move_steps WHERE move_id IN (SELECT id FROM moves WHERE session_id = $1) AND entry_id = $2
    AND status = 'unknown' ORDER BY move_id, idx`,
  resolveUnknownStep: `UPDATE move_steps SET status = $1, result = $2, error = $3 WHERE move_id = $4 AND idx = $5 AND status = 'unknown'`,
  allRunningMoves: `SELECT ${MOVE_COLS} FROM moves WHERE status = 'running' ORDER BY seq`,
  sessionRunningMoves: `SELECT ${MOVE_COLS} FROM moves WHERE status = 'running' AND session_id = $1 ORDER BY seq`,
  lastMove: `SELECT ${MOVE_COLS} FROM moves WHERE session_id = $1 ORDER BY seq DESC LIMIT 1`,
  claimMove: `UPDATE moves SET pid = $1, pid_start = $2, lease_until = ${leaseFor(3)}
    WHERE status = 'running' AND ${heldBy(4, 5)} AND (lease_until IS NULL OR lease_until <= ${DB_NOW_MS}
      OR (pid = $1 AND pid_start IS NOT DISTINCT FROM $2::text))`,
  renewMove: `UPDATE moves SET lease_until = ${leaseFor(1)} WHERE status = 'running' AND ${heldBy(2, 3)}`,
  finishMove: `UPDATE moves SET status = $1, finished_at = $2 WHERE id = $3`,
  moveSteps: `SELECT ${STEP_COLS} FROM move_steps WHERE move_id = $1 ORDER BY idx`,
  setMoveStep: `WITH held AS (UPDATE moves SET lease_until = coalesce(${leaseFor(8)}, lease_until) WHERE ${heldBy(4, 6)} RETURNING 1)
    UPDATE move_steps SET status = $1, result = $2, error = $3 WHERE move_id = $4 AND idx = $5 AND EXISTS (SELECT 1 FROM held)`,
  recordMove: `WITH m AS (INSERT INTO move_history (session_id, kind, from_branch_id, from_position, to_branch_id, to_position, created_at, prev)
      VALUES ($1, $2, $3, $4, $5, $6, $7, (SELECT move_top FROM sessions WHERE id = $1)) RETURNING seq)
    UPDATE sessions SET move_top = 'm:' || (SELECT seq FROM m), move_redo = NULL WHERE id = $1`,
  setMoveUndone: `UPDATE sessions SET move_top = $2, move_redo = $3 WHERE id = $1 AND move_top IS NOT DISTINCT FROM $4::text`,
  // A history move's ends (null: left as it is), on its row or its branch's.
  rowEnds: `UPDATE move_history SET from_branch_id = coalesce($1::text, from_branch_id), from_position = coalesce($2::int, from_position),
    to_branch_id = coalesce($3::text, to_branch_id), to_position = coalesce($4::int, to_position) WHERE seq = $5`,
  branchEnds: `UPDATE branches SET move_from_branch_id = coalesce($1::text, move_from_branch_id),
    move_from_position = coalesce($2::int, move_from_position), move_to_branch_id = coalesce($3::text, move_to_branch_id),
    move_to_position = coalesce($4::int, move_to_position) WHERE id = $5`,
  continueBranch: `UPDATE branches SET continued_by = $1, continued_at = $2, continued_from = $4 WHERE id = $3`,
  continuation: `SELECT continued_by AS "byBranchId", continued_at AS "atPosition", continued_from AS "fromPosition" FROM branches WHERE id = $1 AND continued_by IS NOT NULL`,
};

export function movesTx(sql: Sql): MovesTx {
  return {
    *appliedTools(sessionId: string) {
      return yield* sql.rows<ToolRow>(s.appliedTools, [sessionId]);
    },
    *appliedCalls(sessionId: string) {
      return yield* sql.rows<AppliedCall>(s.appliedCalls, [sessionId]);
    },
    *markApplied(entryId: string, sessionId: string, result: string | null, at: number, through?: readonly string[]) {
      yield* sql.later(MARK_APPLIED, [entryId, sessionId, result, at]);
      if (through === undefined) yield* sql.later(s.unsetAside, [entryId], true);
      else yield* sql.later(s.unsetAsideThrough, [entryId, [...through]], true);
    },
    *unmarkApplied(entryId: string) {
      yield* sql.later(s.unmarkApplied, [entryId]);
    },
    *setAside(entryId: string, sessionId: string, branchId: string, position: number, at: number) {
      yield* sql.later(s.setAside, [entryId, sessionId, branchId, position, at], true);
    },
    *setAsideCalls(sessionId: string) {
      return yield* sql.rows<SetAsideCall>(s.setAsideCalls, [sessionId]);
    },

    *keepReplayResult(entryId: string, sessionId: string, result: string | null, at: number) {
      yield* sql.later(KEEP_REPLAY, [entryId, sessionId, result, at], true);
    },
    *lastReplay(sessionId: string, entryId: string) {
      return (yield* sql.rows<{ result: string | null }>(s.lastReplay, [sessionId, entryId]))[0];
    },
    *replayResult(entryId: string, appliedSeq: number | null) {
      return (yield* sql.rows<{ result: string | null }>(s.replayResult, [entryId, appliedSeq ?? 0]))[0];
    },
    *replayedApplications(sessionId: string) {
      return yield* sql.rows<{ entryId: string; appliedSeq: number }>(s.replayedApplications, [sessionId]);
    },
    *uncertainInvocations(sessionId: string) {
      return yield* sql.column<string>(s.uncertainInvocations, [sessionId]);
    },
    *uncertainCalls() {
      return yield* sql.column<string>(s.uncertainCalls);
    },
    *unknownSteps(sessionId: string, entryId: string) {
      return yield* sql.rows<MoveStepRow>(s.unknownSteps, [sessionId, entryId]);
    },
    *resolveUnknownStep(moveId: string, idx: number, status: "done" | "failed", result: string | null, error: string | null) {
      yield* sql.later(s.resolveUnknownStep, [status, result, error, moveId, idx]);
    },
    *insertMove(r: NewMove, leaseMs: number | null) {
      yield* sql.later(INSERT_MOVE, [r.id, r.sessionId, r.kind, r.spec, r.status, r.pid, r.pidStart, leaseMs, r.createdAt, r.finishedAt]);
    },
    *runningMoves(sessionId?: string) {
      return sessionId === undefined
        ? yield* sql.rows<MoveRow>(s.allRunningMoves)
        : yield* sql.rows<MoveRow>(s.sessionRunningMoves, [sessionId]);
    },
    *claimMove(id: string, owner: Owner, by: Owner, leaseMs: number | null) {
      // Only once the lease has run out, judged as the row is locked: a renewal committed since the move was read wins.
      // Its holder may take back its own (the engine knows it is not in flight) at once.
      const changed = yield* sql.exec(s.claimMove, [by.pid, by.pidStart, leaseMs, id, owner.pid, owner.pidStart]);
      return changed === 1;
    },
    *renewMove(id: string, owner: Owner, leaseMs: number) {
      const changed = yield* sql.exec(s.renewMove, [leaseMs, id, owner.pid, owner.pidStart]);
      return changed === 1;
    },
    *finishMove(id: string, status: "done" | "failed", at: number) {
      yield* sql.later(s.finishMove, [status, at, id]);
    },
    *insertMoveSteps(rows: MoveStepRow[]) {
      if (rows.length === 0) return;
      yield* sql.later(INSERT_STEPS, [
        rows.map((r) => r.moveId),
        rows.map((r) => r.idx),
        rows.map((r) => r.op),
        rows.map((r) => r.entryId),
        rows.map((r) => r.status),
        rows.map((r) => r.result),
        rows.map((r) => r.error),
      ]);
    },
    *moveSteps(moveId: string) {
      return yield* sql.rows<MoveStepRow>(s.moveSteps, [moveId]);
    },
    *lastMove(sessionId: string) {
      return (yield* sql.rows<MoveRow>(s.lastMove, [sessionId]))[0];
    },
    *setMoveStep(
      owner: Owner,
      moveId: string,
      idx: number,
      status: MoveStepStatus,
      result: string | null,
      error: string | null,
      leaseMs: number | null,
    ) {
      // Fenced: a move taken over by another owner is no longer its old owner's to write. Its owner making progress
      // renews its lease in the same statement (no lease given: the lease stays as it is).
      const changed = yield* sql.exec(s.setMoveStep, [status, result, error, moveId, idx, owner.pid, owner.pidStart, leaseMs]);
      return changed === 1;
    },
    *recordMove(r: Omit<MoveHistoryRow, "ref" | "prev">, keepUndone = false) {
      if (!keepUndone) yield* sql.later(FORGET_UNDONE, [r.sessionId]);
      yield* sql.later(s.recordMove, [r.sessionId, r.kind, r.fromBranchId, r.fromPosition, r.toBranchId, r.toPosition, r.createdAt]);
    },
    *moveToUndo(sessionId: string) {
      const { top } = yield* stackOf(sql, sessionId);
      return top === null ? undefined : yield* moveAt(sql, top);
    },
    *moveToRedo(sessionId: string) {
      const { redo } = yield* stackOf(sql, sessionId);
      return redo.length === 0 ? undefined : yield* moveAt(sql, redo[redo.length - 1]!);
    },
    *historyMove(ref: string) {
      return yield* moveAt(sql, ref);
    },
    *setMoveUndone(sessionId: string, ref: string, op: "undo" | "redo", ends?: MoveEnds) {
      const stack = yield* stackOf(sql, sessionId);
      const next = stackAfter(stack, yield* moveAt(sql, ref), op);
      if (!next) return false;
      const changed = yield* sql.exec(s.setMoveUndone, [sessionId, next.top, next.redo, stack.top]);
      if (changed !== 1) return false;
      if (ends) {
        const { from, to } = ends;
        const values = [from?.branchId ?? null, from?.position ?? null, to?.branchId ?? null, to?.position ?? null];
        if (ref.startsWith("m:")) yield* sql.exec(s.rowEnds, [...values, Number(ref.slice(2))]);
        else yield* sql.exec(s.branchEnds, [...values, ref]);
      }
      return true;
    },
    *moveStack(sessionId: string) {
      return yield* stackOf(sql, sessionId);
    },
    *swapMoveStack(sessionId: string, expected: MoveStack, next: MoveStack) {
      const stack = yield* stackOf(sql, sessionId);
      if (!sameStack(stack, expected)) return false;
      // As `setMoveUndone`: the top read is the top written over.
      return (yield* sql.exec(s.setMoveUndone, [sessionId, next.top, redoColumn(next.redo), stack.top])) === 1;
    },

    *continueBranch(branchId: string, byBranchId: string, atPosition: number, fromPosition?: number) {
      yield* sql.exec(s.continueBranch, [byBranchId, atPosition, branchId, fromPosition ?? null]);
    },
    *branchContinuation(branchId: string) {
      const [row] = yield* sql.rows<BranchContinuation>(s.continuation, [branchId]);
      return row;
    },

    *deleteFinishedMoves(sessionId?: string) {
      const [n] = yield* sql.column<number>(
        `WITH gone AS (SELECT id FROM moves m WHERE m.status <> 'running' ${sessionId === undefined ? "" : "AND m.session_id = $1"}
            AND NOT EXISTS (SELECT 1 FROM move_steps s WHERE s.move_id = m.id AND s.status = 'unknown')
            AND NOT (m.status = 'failed' AND m.seq = (SELECT max(x.seq) FROM moves x WHERE x.session_id = m.session_id)
              AND (m.spec LIKE '%"putBacks"%' OR EXISTS (SELECT 1 FROM move_steps s WHERE s.move_id = m.id AND s.op = 'undo' AND s.result LIKE '{"putBack":%')))),
          steps AS (DELETE FROM move_steps WHERE move_id IN (SELECT id FROM gone)),
          deleted AS (DELETE FROM moves WHERE id IN (SELECT id FROM gone) RETURNING 1)
        SELECT count(*) FROM deleted`,
        sessionId === undefined ? [] : [sessionId],
      );
      return n!;
    },
  };
}
