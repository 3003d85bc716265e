// The request ledger: SQLite's statements and the port's RequestsTx.
import type Database from "better-sqlite3";
import { RequestTakenError, type RequestRow, type RequestsTx } from "../port/index.js";
import { prepare } from "./object-rows.js";

/**
 * Moves the requests kept on the rows of the checkpoints `where` selects to the ledger's table, before they are
 * deleted: a retry then still answers as the first call did. The answer becomes a turn's as the table keeps it (see
 * `KeptTurnAnswer`): its messages, the checkpoint whole, its `expiresIn`.
 */
export const keepRequests = (where: string) => `INSERT INTO requests (session_id, request_id, fingerprint, answer, created_at)
  SELECT session_id, request_id, request_fingerprint, json_array(
      CASE WHEN request_answer ->> '$[1]' = 0 THEN json('[]')
        ELSE json_array(branch_id, request_answer ->> '$[0]', request_answer ->> '$[1]') END,
      json_array(id, session_id, branch_id, position, name, json(CASE WHEN auto THEN 'true' ELSE 'false' END), json(metadata), user_id,
        checksum, created_at, expires_at),
      request_answer ->> '$[2]'),
    created_at
  FROM checkpoints WHERE request_id IS NOT NULL AND ${where}`;

export function requestsTx(db: Database.Database): RequestsTx {
  const s = {
    // A taken id fails the insert on the primary key: the store's `translate` makes that a RequestTakenError.
    insert: prepare(db, `INSERT INTO requests (session_id, request_id, fingerprint, answer, created_at) VALUES (?, ?, ?, ?, ?)`),
    onCheckpoint: prepare(db, `SELECT 1 FROM checkpoints WHERE session_id = ? AND request_id = ?`, "pluck"),
    get: prepare(
      db,
      `SELECT session_id AS sessionId, request_id AS requestId, fingerprint, answer, created_at AS createdAt, NULL AS checkpointId
      FROM requests WHERE session_id = ? AND request_id = ?`,
    ),
    getOnCheckpoint: prepare(
      db,
      `SELECT session_id AS sessionId, request_id AS requestId, request_fingerprint AS fingerprint, request_answer AS answer,
        created_at AS createdAt, id AS checkpointId
      FROM checkpoints WHERE session_id = ? AND request_id = ?`,
    ),
    forget: prepare(db, `DELETE FROM requests WHERE session_id = ? AND request_id = ?`),
    forgetOnCheckpoint: prepare(
      db,
      `UPDATE checkpoints SET request_id = NULL, request_fingerprint = NULL, request_answer = NULL WHERE session_id = ? AND request_id = ?`,
    ),
  };
  return {
    *insertRequest(r: RequestRow) {
      // A turn's request is kept on its checkpoint's row (see checkpoints.ts): an id held there is taken as well.
      if (s.onCheckpoint.get(r.sessionId, r.requestId) !== undefined) throw new RequestTakenError();
      s.insert.run(r.sessionId, r.requestId, r.fingerprint, r.answer, r.createdAt);
    },
    *getRequest(sessionId: string, requestId: string) {
      return (s.get.get(sessionId, requestId) ?? s.getOnCheckpoint.get(sessionId, requestId)) as RequestRow | undefined;
    },
    *forgetRequests(sessionId: string, requestIds: readonly string[]) {
      for (const id of requestIds) {
        s.forget.run(sessionId, id);
        s.forgetOnCheckpoint.run(sessionId, id);
      }
    },
  };
}
