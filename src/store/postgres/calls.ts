// The owners of running tool calls, whose leases PostgreSQL sets and judges by its own clock, and the paths calls
// changed: the port's CallsTx.
import type { CallOutputs, CallOwnerRow, CallRecord, CallPlace, CallsTx, Owner, SessionActivity } from "../port/index.js";
import { handEditIdsJson, handEditIdsOf, handEditedJson, handEditedOf, outputsJson, outputsOf } from "../port/call-outputs.js";
import { DB_NOW_MS } from "./columns.js";
import { insertRow } from "./batch.js";
import type { Sql } from "./sql.js";

const OWNER_COLS = `c.entry_id AS "entryId", c.session_id AS "sessionId", e.tool, c.pid, c.pid_start AS "pidStart",
  c.lease_until > ${DB_NOW_MS} AS "leaseHeld"`;

/** A session's running moves and its calls' owners as one statement (one round trip): `kind` tells them apart. */
const ACTIVITY = `SELECT 0 AS kind, id, NULL AS "entryId", session_id AS "sessionId", NULL AS tool, pid, pid_start AS "pidStart",
    lease_until > ${DB_NOW_MS} AS "leaseHeld", seq
  FROM moves WHERE status = 'running' AND session_id = $1
  UNION ALL
  SELECT 1, NULL, ${OWNER_COLS}, e.seq FROM running_calls c JOIN entries e ON e.id = c.entry_id WHERE c.session_id = $1
  ORDER BY kind, seq`;

type ActivityRow = CallOwnerRow & { kind: number; id: string };

/** A call's owner, its lease ($5 ms) from now by the database's clock. */
const INSERT_OWNER = insertRow("running_calls", ["entry_id", "session_id", "pid", "pid_start", "lease_until"], {
  expr: { lease_until: (p) => `${DB_NOW_MS} + ${p}::float8` },
});

/** This file's statements, named for the methods that run them. */
const s = {
  renewCall: `UPDATE running_calls SET lease_until = ${DB_NOW_MS} + $1::float8
    WHERE entry_id = $2 AND pid = $3 AND pid_start IS NOT DISTINCT FROM $4::text`,
  deleteCallOwner: `DELETE FROM running_calls WHERE entry_id = $1`,
  allOwners: `SELECT ${OWNER_COLS} FROM running_calls c JOIN entries e ON e.id = c.entry_id ORDER BY e.seq`,
  sessionOwners: `SELECT ${OWNER_COLS} FROM running_calls c JOIN entries e ON e.id = c.entry_id WHERE c.session_id = $1 ORDER BY e.seq`,
  callPaths: `SELECT paths FROM call_paths WHERE entry_id = $1`,
  callOutputs: `SELECT outputs FROM call_paths WHERE entry_id = $1`,
  callHandEdited: `SELECT hand_edited FROM call_paths WHERE entry_id = $1`,
  callHandEditIds: `SELECT hand_edit_ids FROM call_paths WHERE entry_id = $1`,
  putRecordedFiles: `UPDATE tool_results SET named_files = $1 WHERE entry_id = $2`,
  recordedFiles: `SELECT named_files FROM tool_results WHERE entry_id = $1`,
  pathChangingCalls: `SELECT e.id, e.branch_id AS "branchId", e.position FROM call_paths c JOIN entries e ON e.id = c.entry_id
    WHERE c.session_id = $1 AND c.paths <> '[]' ORDER BY e.seq`,
  pathlessCalls: `SELECT c.entry_id AS id, e.tool FROM call_paths c JOIN entries e ON e.id = c.entry_id
    WHERE c.session_id = $1 AND c.paths = '[]' ORDER BY e.seq`,
};

/** A call's changed paths, replacing any record of them. */
const PUT_PATHS = insertRow("call_paths", ["entry_id", "session_id", "paths", "outputs", "hand_edited", "hand_edit_ids"], {
  tail: `ON CONFLICT (entry_id) DO UPDATE SET session_id = excluded.session_id, paths = excluded.paths, outputs = excluded.outputs, hand_edited = excluded.hand_edited, hand_edit_ids = excluded.hand_edit_ids`,
});

// An owner's row leaves every session's current state (branch, head) as it was: writing one keeps what is known of it.
export function callsTx(sql: Sql): CallsTx {
  return {
    *insertCallOwner(entryId: string, sessionId: string, owner: Owner, leaseMs: number | null) {
      yield* sql.later(INSERT_OWNER, [entryId, sessionId, owner.pid, owner.pidStart, leaseMs ?? 0], true);
    },
    *renewCall(entryId: string, owner: Owner, leaseMs: number) {
      const changed = yield* sql.exec(s.renewCall, [leaseMs, entryId, owner.pid, owner.pidStart]);
      return changed === 1;
    },
    *deleteCallOwner(entryId: string) {
      yield* sql.later(s.deleteCallOwner, [entryId], true);
    },
    *callOwners(sessionId?: string) {
      return sessionId === undefined
        ? yield* sql.rows<CallOwnerRow>(s.allOwners)
        : yield* sql.rows<CallOwnerRow>(s.sessionOwners, [sessionId]);
    },
    *activity(sessionId: string) {
      const out: SessionActivity = { moves: [], calls: [] };
      for (const { kind, id, entryId, sessionId: session, tool, pid, pidStart, leaseHeld } of yield* sql.rows<ActivityRow>(ACTIVITY, [
        sessionId,
      ])) {
        if (kind === 0) out.moves.push({ id, pid, pidStart, leaseHeld });
        else out.calls.push({ entryId, sessionId: session, tool, pid, pidStart, leaseHeld });
      }
      return out;
    },
    *putCallPaths(entryId: string, sessionId: string, paths: readonly string[], recorded: CallRecord = {}) {
      const row = [
        entryId,
        sessionId,
        JSON.stringify([...paths].sort()),
        outputsJson(recorded.outputs),
        handEditedJson(recorded.handEdited),
        handEditIdsJson(recorded.handEditIds),
      ];
      yield* sql.later(PUT_PATHS, row, true);
    },
    *callOutputs(entryId: string) {
      return outputsOf((yield* sql.column<string | null>(s.callOutputs, [entryId]))[0]);
    },
    *callPaths(entryId: string) {
      const text = yield* sql.column<string>(s.callPaths, [entryId]);
      return text.length === 0 ? undefined : (JSON.parse(text[0]!) as string[]);
    },
    *callHandEdited(entryId: string) {
      return handEditedOf((yield* sql.column<string | null>(s.callHandEdited, [entryId]))[0]);
    },
    *callHandEditIds(entryId: string) {
      return handEditIdsOf((yield* sql.column<string | null>(s.callHandEditIds, [entryId]))[0]);
    },
    *putRecordedFiles(entryId: string, files: CallOutputs) {
      yield* sql.later(s.putRecordedFiles, [outputsJson(files), entryId], true);
    },
    *recordedFiles(entryId: string) {
      return outputsOf((yield* sql.column<string | null>(s.recordedFiles, [entryId]))[0]);
    },
    *pathChangingCalls(sessionId: string) {
      return yield* sql.rows<CallPlace>(s.pathChangingCalls, [sessionId]);
    },
    *pathlessCalls(sessionId: string) {
      return yield* sql.rows<{ id: string; tool: string | null }>(s.pathlessCalls, [sessionId]);
    },
  };
}
