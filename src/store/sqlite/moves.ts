// The applied set and the move journal: SQLite's statements and the port's MovesTx.
import type Database from "better-sqlite3";
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
} from "../port/index.js";
import { redoColumn, sameStack, stackAfter, type MoveStack } from "../port/move-stack.js";
import { BRANCH_MOVE_COLS, FORGET_UNDONE, HISTORY_COLS, MOVE_COLS, STEP_COLS, TOOL_COLS, toolRows } from "./columns.js";
import { prepare, type RowMode } from "./object-rows.js";

export function movesTx(db: Database.Database): MovesTx {
  const p = (sql: string, mode?: RowMode) => prepare(db, sql, mode);
  const s = {
    appliedTools: p(`SELECT ${TOOL_COLS} FROM applied a JOIN entries e ON e.id = a.entry_id LEFT JOIN tool_results r ON r.entry_id = e.id
    WHERE a.session_id = ? ORDER BY a.applied_seq DESC`),
    appliedCalls: p(`SELECT e.id, e.branch_id AS branchId, e.position FROM applied a JOIN entries e ON e.id = a.entry_id
    WHERE a.session_id = ? ORDER BY a.applied_seq DESC`),
    // An application's number is never reused: a snapshot may name a replay's (kept in replay_results) after the
    // call was unapplied, so the next number counts past those too, not only past the applications standing now.
    markApplied: p(`INSERT OR REPLACE INTO applied (entry_id, session_id, result, applied_seq, applied_at)
    VALUES (?, ?, ?, max((SELECT coalesce(max(applied_seq), 0) FROM applied), (SELECT coalesce(max(applied_seq), 0) FROM replay_results)) + 1, ?)`),
    unmarkApplied: p(`DELETE FROM applied WHERE entry_id = ?`),
    // One row per call and branch (set aside on two branches, it stays out of both): set aside again there, replaced.
    setAside: p(`INSERT INTO set_aside (entry_id, session_id, branch_id, position, set_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (entry_id, branch_id) DO UPDATE SET session_id = excluded.session_id, position = excluded.position, set_at = excluded.set_at`),
    unsetAside: p(`DELETE FROM set_aside WHERE entry_id = ?`),
    unsetAsideThrough: p(`DELETE FROM set_aside WHERE entry_id = ? AND (branch_id = '' OR branch_id IN (SELECT value FROM json_each(?)))`),
    setAsideCalls: p(
      `SELECT entry_id AS id, nullif(branch_id, '') AS branchId, position FROM set_aside WHERE session_id = ? ORDER BY entry_id, branch_id`,
    ),
    uncertain: p(
      `SELECT DISTINCT s.entry_id AS id FROM move_steps s JOIN moves m ON m.id = s.move_id WHERE m.session_id = ? AND s.status = 'unknown'`,
    ),
    uncertainAll: p(`SELECT DISTINCT entry_id AS id FROM move_steps WHERE status = 'unknown'`),
    unknownSteps: p(
      `SELECT ${STEP_COLS} FROM move_steps WHERE move_id IN (SELECT id FROM moves WHERE session_id = ?) AND entry_id = ? AND status = 'unknown'
      ORDER BY move_id, idx`,
    ),
    resolveStep: p(`UPDATE move_steps SET status = ?, result = ?, error = ? WHERE move_id = ? AND idx = ? AND status = 'unknown'`),
    insertMove: p(`INSERT INTO moves (id, session_id, kind, spec, status, pid, pid_start, created_at, finished_at)
    VALUES (@id, @sessionId, @kind, @spec, @status, @pid, @pidStart, @createdAt, @finishedAt)`),
    runningMoves: p(`SELECT ${MOVE_COLS} FROM moves WHERE status = 'running' ORDER BY seq`),
    runningMovesOf: p(`SELECT ${MOVE_COLS} FROM moves WHERE status = 'running' AND session_id = ? ORDER BY seq`),
    lastMove: p(`SELECT ${MOVE_COLS} FROM moves WHERE session_id = ? ORDER BY seq DESC LIMIT 1`),
    claimMove: p(`UPDATE moves SET pid = ?, pid_start = ? WHERE id = ? AND status = 'running' AND pid = ? AND pid_start IS ?`),
    finishMove: p(`UPDATE moves SET status = ?, finished_at = ? WHERE id = ?`),
    insertStep: p(
      `INSERT INTO move_steps (move_id, idx, op, entry_id, status, result, error) VALUES (@moveId, @idx, @op, @entryId, @status, @result, @error)`,
    ),
    steps: p(`SELECT ${STEP_COLS} FROM move_steps WHERE move_id = ? ORDER BY idx`),
    // One per application: the current one's (0 when not applied) replaces any kept for it before.
    keepReplay: p(`INSERT OR REPLACE INTO replay_results (entry_id, session_id, applied_seq, result, replayed_at)
      VALUES (@entryId, @sessionId, coalesce((SELECT applied_seq FROM applied WHERE entry_id = @entryId), 0), @result, @at)`),
    keptReplay: p(`SELECT result FROM replay_results WHERE session_id = ? AND entry_id = ? ORDER BY applied_seq DESC LIMIT 1`),
    replayResult: p(`SELECT result FROM replay_results WHERE entry_id = ? AND applied_seq = ?`),
    replayedApplications: p(`SELECT a.entry_id AS entryId, a.applied_seq AS appliedSeq FROM applied a
      WHERE a.session_id = ? AND EXISTS (SELECT 1 FROM replay_results r WHERE r.entry_id = a.entry_id AND r.applied_seq = a.applied_seq)
      ORDER BY a.applied_seq`),
    journaledReplay: p(`SELECT s.result FROM move_steps s JOIN moves m ON m.id = s.move_id
      WHERE m.session_id = ? AND s.entry_id = ? AND s.op = 'replay' AND s.status = 'done' ORDER BY m.seq DESC, s.idx DESC LIMIT 1`),
    // Fenced: a move taken over by another process is no longer its old owner's to write.
    setStep: p(`UPDATE move_steps SET status = ?, result = ?, error = ? WHERE move_id = ? AND idx = ?
      AND EXISTS (SELECT 1 FROM moves WHERE id = ? AND pid = ? AND pid_start IS ?)`),
    holds: p(`SELECT 1 FROM moves WHERE id = ? AND status = 'running' AND pid = ? AND pid_start IS ?`, "pluck"),
    finishedMoves: p(
      `SELECT id FROM moves m WHERE m.status <> 'running' AND (@sessionId IS NULL OR m.session_id = @sessionId)
      AND NOT EXISTS (SELECT 1 FROM move_steps s WHERE s.move_id = m.id AND s.status = 'unknown')
      AND NOT (m.status = 'failed' AND m.seq = (SELECT max(x.seq) FROM moves x WHERE x.session_id = m.session_id)
        AND (m.spec LIKE '%"putBacks"%' OR EXISTS (SELECT 1 FROM move_steps s WHERE s.move_id = m.id AND s.op = 'undo' AND s.result LIKE '{"putBack":%')))`,
      "pluck",
    ),
    deleteMoveSteps: p(`DELETE FROM move_steps WHERE move_id = ?`),
    forgetUndone: p(FORGET_UNDONE),
    recordMove: p(`INSERT INTO move_history (session_id, kind, from_branch_id, from_position, to_branch_id, to_position, created_at, prev)
    VALUES (@sessionId, @kind, @fromBranchId, @fromPosition, @toBranchId, @toPosition, @createdAt, (SELECT move_top FROM sessions WHERE id = @sessionId))`),
    stack: p(`SELECT move_top AS top, move_redo AS redo FROM sessions WHERE id = ?`),
    setStack: p(`UPDATE sessions SET move_top = ?, move_redo = ? WHERE id = ?`),
    rowMove: p(`SELECT ${HISTORY_COLS} FROM move_history WHERE seq = ?`),
    branchMove: p(`SELECT ${BRANCH_MOVE_COLS} FROM branches WHERE id = ? AND move_kind IS NOT NULL`),
    deleteMove: p(`DELETE FROM moves WHERE id = ?`),
    // A history move's ends (null: left as it is), on its row or its branch's.
    rowEnds: p(`UPDATE move_history SET from_branch_id = coalesce(?, from_branch_id), from_position = coalesce(?, from_position),
      to_branch_id = coalesce(?, to_branch_id), to_position = coalesce(?, to_position) WHERE seq = ?`),
    branchEnds: p(`UPDATE branches SET move_from_branch_id = coalesce(?, move_from_branch_id),
      move_from_position = coalesce(?, move_from_position), move_to_branch_id = coalesce(?, move_to_branch_id),
      move_to_position = coalesce(?, move_to_position) WHERE id = ?`),
    continueBranch: p(`UPDATE branches SET continued_by = ?, continued_at = ?, continued_from = ? WHERE id = ?`),
    continuation: p(
      `SELECT continued_by AS byBranchId, continued_at AS atPosition, continued_from AS fromPosition FROM branches WHERE id = ? AND continued_by IS NOT NULL`,
    ),
  };
  const stackOf = (sessionId: string): MoveStack => {
    const row = s.stack.get(sessionId) as { top: string | null; redo: string | null } | undefined;
    return { top: row?.top ?? null, redo: row?.redo ? (JSON.parse(row.redo) as string[]) : [] };
  };
  // A ref is a string (a move journaled before the stack named its row by a number: nothing is found for it).
  const moveAt = (ref: string): MoveHistoryRow | undefined =>
    typeof ref !== "string"
      ? undefined
      : ((ref.startsWith("m:") ? s.rowMove.get(Number(ref.slice(2))) : s.branchMove.get(ref)) as MoveHistoryRow | undefined);
  return {
    *appliedTools(sessionId: string) {
      return toolRows(s.appliedTools.all(sessionId));
    },
    *appliedCalls(sessionId: string) {
      return s.appliedCalls.all(sessionId) as AppliedCall[];
    },
    *markApplied(entryId: string, sessionId: string, result: string | null, at: number, through?: readonly string[]) {
      s.markApplied.run(entryId, sessionId, result, at);
      if (through === undefined) s.unsetAside.run(entryId);
      else s.unsetAsideThrough.run(entryId, JSON.stringify(through));
    },
    *unmarkApplied(entryId: string) {
      s.unmarkApplied.run(entryId);
    },
    *setAside(entryId: string, sessionId: string, branchId: string, position: number, at: number) {
      s.setAside.run(entryId, sessionId, branchId, position, at);
    },
    *setAsideCalls(sessionId: string) {
      return s.setAsideCalls.all(sessionId) as SetAsideCall[];
    },

    *keepReplayResult(entryId: string, sessionId: string, result: string | null, at: number) {
      s.keepReplay.run({ entryId, sessionId, result, at });
    },
    // A replay recorded before results were kept is in the journal only (until its move is deleted).
    *lastReplay(sessionId: string, entryId: string) {
      return (s.keptReplay.get(sessionId, entryId) ?? s.journaledReplay.get(sessionId, entryId)) as { result: string | null } | undefined;
    },
    *replayResult(entryId: string, appliedSeq: number | null) {
      return s.replayResult.get(entryId, appliedSeq ?? 0) as { result: string | null } | undefined;
    },
    *replayedApplications(sessionId: string) {
      return s.replayedApplications.all(sessionId) as { entryId: string; appliedSeq: number }[];
    },
    *uncertainInvocations(sessionId: string) {
      return (s.uncertain.all(sessionId) as { id: string }[]).map((r) => r.id);
    },
    *uncertainCalls() {
      return (s.uncertainAll.all() as { id: string }[]).map((r) => r.id);
    },
    *unknownSteps(sessionId: string, entryId: string) {
      return s.unknownSteps.all(sessionId, entryId) as MoveStepRow[];
    },
    *resolveUnknownStep(moveId: string, idx: number, status: "done" | "failed", result: string | null, error: string | null) {
      s.resolveStep.run(status, result, error, moveId, idx);
    },
    // Owners here are processes, not leases: lease lengths are not kept.
    *insertMove(row: NewMove) {
      s.insertMove.run(row);
    },
    *runningMoves(sessionId?: string) {
      return (sessionId === undefined ? s.runningMoves.all() : s.runningMovesOf.all(sessionId)) as MoveRow[];
    },
    *claimMove(id: string, owner: Owner, by: Owner) {
      return s.claimMove.run(by.pid, by.pidStart, id, owner.pid, owner.pidStart).changes === 1;
    },
    // Owners here are processes, not leases: renewing only checks that the move is still the owner's.
    *renewMove(id: string, owner: Owner) {
      return s.holds.get(id, owner.pid, owner.pidStart) !== undefined;
    },
    *finishMove(id: string, status: "done" | "failed", at: number) {
      s.finishMove.run(status, at, id);
    },
    *insertMoveSteps(rows: MoveStepRow[]) {
      for (const row of rows) s.insertStep.run(row);
    },
    *moveSteps(moveId: string) {
      return s.steps.all(moveId) as MoveStepRow[];
    },
    *lastMove(sessionId: string) {
      return s.lastMove.get(sessionId) as MoveRow | undefined;
    },
    *setMoveStep(owner: Owner, moveId: string, idx: number, status: MoveStepStatus, result: string | null, error: string | null) {
      return s.setStep.run(status, result, error, moveId, idx, moveId, owner.pid, owner.pidStart).changes === 1;
    },

    *recordMove(row: Omit<MoveHistoryRow, "ref" | "prev">, keepUndone = false) {
      const { redo } = stackOf(row.sessionId);
      if (redo.length > 0 && !keepUndone) s.forgetUndone.run(JSON.stringify(redo));
      s.setStack.run(`m:${s.recordMove.run(row).lastInsertRowid}`, null, row.sessionId);
    },
    *moveToUndo(sessionId: string) {
      const { top } = stackOf(sessionId);
      return top === null ? undefined : moveAt(top);
    },
    *moveToRedo(sessionId: string) {
      const { redo } = stackOf(sessionId);
      return redo.length === 0 ? undefined : moveAt(redo[redo.length - 1]!);
    },
    *historyMove(ref: string) {
      return moveAt(ref);
    },
    *setMoveUndone(sessionId: string, ref: string, op: "undo" | "redo", ends?: MoveEnds) {
      const stack = stackOf(sessionId);
      const move = moveAt(ref);
      const next = stackAfter(stack, move, op);
      if (!next) return false;
      s.setStack.run(next.top, next.redo, sessionId);
      if (ends) {
        const { from, to } = ends;
        const values = [from?.branchId ?? null, from?.position ?? null, to?.branchId ?? null, to?.position ?? null];
        if (ref.startsWith("m:")) s.rowEnds.run(...values, Number(ref.slice(2)));
        else s.branchEnds.run(...values, ref);
      }
      return true;
    },
    *moveStack(sessionId: string) {
      return stackOf(sessionId);
    },
    // Transactions here are serialized: the stack read is the stack written over.
    *swapMoveStack(sessionId: string, expected: MoveStack, next: MoveStack) {
      if (!sameStack(stackOf(sessionId), expected)) return false;
      s.setStack.run(next.top, redoColumn(next.redo), sessionId);
      return true;
    },

    *continueBranch(branchId: string, byBranchId: string, atPosition: number, fromPosition?: number) {
      s.continueBranch.run(byBranchId, atPosition, fromPosition ?? null, branchId);
    },
    *branchContinuation(branchId: string) {
      return s.continuation.get(branchId) as BranchContinuation | undefined;
    },

    *deleteFinishedMoves(sessionId?: string) {
      const ids = s.finishedMoves.all({ sessionId: sessionId ?? null }) as string[];
      for (const id of ids) {
        s.deleteMoveSteps.run(id);
        s.deleteMove.run(id);
      }
      return ids.length;
    },
  };
}
