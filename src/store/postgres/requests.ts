// The request ledger: PostgreSQL's statements and the port's RequestsTx.
import type { RequestRow, RequestsTx } from "../port/index.js";
import { insertWith } from "./batch.js";
import type { Sql } from "./sql.js";

/**
 * A turn's request is kept on its checkpoint's row: an id held there is taken as well. The select then yields the row
 * twice and the primary key refuses the second (a RequestTakenError), with no round trip of its own.
 */
const INSERT_REQUEST = insertWith(
  "requests",
  (p) => `INSERT INTO requests (session_id, request_id, fingerprint, answer, created_at)
  SELECT ${p(1)}::text, ${p(2)}::text, ${p(3)}::text, ${p(4)}::text, ${p(5)}::float8
  UNION ALL SELECT ${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)} FROM checkpoints WHERE session_id = ${p(1)} AND request_id = ${p(2)}`,
);

/**
 * Moves the requests kept on the rows of the checkpoints `where` selects to the ledger's table, before they are
 * deleted: a retry then still answers as the first call did. The answer becomes a turn's as the table keeps it (see
 * `KeptTurnAnswer`): its messages, the checkpoint whole, its `expiresIn`.
 */
export const keepRequests = (where: string) => `INSERT INTO requests (session_id, request_id, fingerprint, answer, created_at)
  SELECT session_id, request_id, request_fingerprint, json_build_array(
      CASE WHEN (request_answer::json ->> 1)::int = 0 THEN '[]'::json
        ELSE json_build_array(branch_id, request_answer::json -> 0, request_answer::json -> 1) END,
      json_build_array(id, session_id, branch_id, position, name, auto, metadata::json, user_id, checksum, created_at, expires_at),
      request_answer::json -> 2)::text,
    created_at
  FROM checkpoints WHERE request_id IS NOT NULL AND ${where}`;

/** This file's statements, named for the methods that run them. */
const s = {
  getRequest: `SELECT session_id AS "sessionId", request_id AS "requestId", fingerprint, answer, created_at AS "createdAt",
      NULL::text AS "checkpointId"
    FROM requests WHERE session_id = $1 AND request_id = $2
    UNION ALL SELECT session_id, request_id, request_fingerprint, request_answer, created_at, id
    FROM checkpoints WHERE session_id = $1 AND request_id = $2 LIMIT 1`,
  forgetRequests: `WITH c AS (UPDATE checkpoints SET request_id = NULL, request_fingerprint = NULL, request_answer = NULL
      WHERE session_id = $1 AND request_id = ANY($2::text[]))
    DELETE FROM requests WHERE session_id = $1 AND request_id = ANY($2::text[])`,
};

export function requestsTx(sql: Sql): RequestsTx {
  return {
    // Sent with the unit's COMMIT (no round trip of its own); a taken id fails it on the primary key, which the store's
    // `translate` makes a RequestTakenError. The session's current state is as it was: what is known of it is kept.
    *insertRequest(r: RequestRow) {
      yield* sql.later(INSERT_REQUEST, [r.sessionId, r.requestId, r.fingerprint, r.answer, r.createdAt], true);
    },
    *getRequest(sessionId: string, requestId: string) {
      return yield* sql.one<RequestRow>(s.getRequest, [sessionId, requestId]);
    },
    *forgetRequests(sessionId: string, requestIds: readonly string[]) {
      // Sent with the unit's next statement or its COMMIT: nothing reads its result.
      if (requestIds.length > 0) yield* sql.later(s.forgetRequests, [sessionId, requestIds], true);
    },
  };
}
