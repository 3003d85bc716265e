// The owners of running tool calls (processes here, not leases) and the paths calls changed: SQLite's CallsTx.
import type Database from "better-sqlite3";
import { handEditIdsJson, handEditIdsOf, handEditedJson, handEditedOf, outputsJson, outputsOf } from "../port/call-outputs.js";
import type { CallOutputs, CallOwnerRow, CallRecord, CallPlace, CallsTx, Owner, SessionActivity } from "../port/index.js";
import { prepare } from "./object-rows.js";

const OWNER_COLS = `c.entry_id AS entryId, c.session_id AS sessionId, e.tool, c.pid, c.pid_start AS pidStart, NULL AS leaseHeld`;

export function callsTx(db: Database.Database): CallsTx {
  const s = {
    insert: prepare(db, `INSERT INTO running_calls (entry_id, session_id, pid, pid_start) VALUES (?, ?, ?, ?)`),
    holds: prepare(db, `SELECT 1 FROM running_calls WHERE entry_id = ? AND pid = ? AND pid_start IS ?`, "pluck"),
    delete: prepare(db, `DELETE FROM running_calls WHERE entry_id = ?`),
    all: prepare(db, `SELECT ${OWNER_COLS} FROM running_calls c JOIN entries e ON e.id = c.entry_id ORDER BY e.seq`),
    moves: prepare(
      db,
      `SELECT id, pid, pid_start AS pidStart, NULL AS leaseHeld FROM moves WHERE status = 'running' AND session_id = ? ORDER BY seq`,
    ),
    ofSession: prepare(
      db,
      `SELECT ${OWNER_COLS} FROM running_calls c JOIN entries e ON e.id = c.entry_id WHERE c.session_id = ? ORDER BY e.seq`,
    ),
    putPaths: prepare(
      db,
      `INSERT OR REPLACE INTO call_paths (entry_id, session_id, paths, outputs, hand_edited, hand_edit_ids) VALUES (?, ?, ?, ?, ?, ?)`,
    ),
    paths: prepare(db, `SELECT paths FROM call_paths WHERE entry_id = ?`, "pluck"),
    outputs: prepare(db, `SELECT outputs FROM call_paths WHERE entry_id = ?`, "pluck"),
    handEdited: prepare(db, `SELECT hand_edited FROM call_paths WHERE entry_id = ?`, "pluck"),
    handEditIds: prepare(db, `SELECT hand_edit_ids FROM call_paths WHERE entry_id = ?`, "pluck"),
    putRecorded: prepare(db, `UPDATE tool_results SET named_files = ? WHERE entry_id = ?`),
    recorded: prepare(db, `SELECT named_files FROM tool_results WHERE entry_id = ?`, "pluck"),
    changing: prepare(
      db,
      `SELECT e.id, e.branch_id AS branchId, e.position FROM call_paths c JOIN entries e ON e.id = c.entry_id
      WHERE c.session_id = ? AND c.paths <> '[]' ORDER BY e.seq`,
    ),
    pathless: prepare(
      db,
      `SELECT c.entry_id AS id, e.tool FROM call_paths c JOIN entries e ON e.id = c.entry_id WHERE c.session_id = ? AND c.paths = '[]'
      ORDER BY e.seq`,
    ),
  };
  return {
    *insertCallOwner(entryId: string, sessionId: string, owner: Owner) {
      s.insert.run(entryId, sessionId, owner.pid, owner.pidStart);
    },
    // Nothing to extend: renewing only checks that the call is still the owner's.
    *renewCall(entryId: string, owner: Owner) {
      return s.holds.get(entryId, owner.pid, owner.pidStart) !== undefined;
    },
    *deleteCallOwner(entryId: string) {
      s.delete.run(entryId);
    },
    *callOwners(sessionId?: string) {
      return (sessionId === undefined ? s.all.all() : s.ofSession.all(sessionId)) as CallOwnerRow[];
    },
    // Two statements: on an embedded database a statement costs no round trip.
    *activity(sessionId: string) {
      const out: SessionActivity = {
        moves: s.moves.all(sessionId) as SessionActivity["moves"],
        calls: s.ofSession.all(sessionId) as CallOwnerRow[],
      };
      return out;
    },
    *putCallPaths(entryId: string, sessionId: string, paths: readonly string[], recorded: CallRecord = {}) {
      s.putPaths.run(
        entryId,
        sessionId,
        JSON.stringify([...paths].sort()),
        outputsJson(recorded.outputs),
        handEditedJson(recorded.handEdited),
        handEditIdsJson(recorded.handEditIds),
      );
    },
    *callOutputs(entryId: string) {
      return outputsOf(s.outputs.get(entryId) as string | null | undefined);
    },
    *callPaths(entryId: string) {
      const text = s.paths.get(entryId) as string | undefined;
      return text === undefined ? undefined : (JSON.parse(text) as string[]);
    },
    *callHandEdited(entryId: string) {
      return handEditedOf(s.handEdited.get(entryId) as string | null | undefined);
    },
    *callHandEditIds(entryId: string) {
      return handEditIdsOf(s.handEditIds.get(entryId) as string | null | undefined);
    },
    *putRecordedFiles(entryId: string, files: CallOutputs) {
      s.putRecorded.run(outputsJson(files), entryId);
    },
    *recordedFiles(entryId: string) {
      return outputsOf(s.recorded.get(entryId) as string | null | undefined);
    },
    *pathChangingCalls(sessionId: string) {
      return s.changing.all(sessionId) as CallPlace[];
    },
    *pathlessCalls(sessionId: string) {
      return s.pathless.all(sessionId) as { id: string; tool: string | null }[];
    },
  };
}
