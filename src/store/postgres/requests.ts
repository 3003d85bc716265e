// The request ledger: PostgreSQL's statements and the port's RequestsTx.
import type { RequestRow, RequestsTx } from "../port/index.js";
import { insertRow } from "./batch.js";
import type { Sql } from "./sql.js";

const INSERT_REQUEST = insertRow("requests", ["session_id", "request_id", "fingerprint", "answer", "created_at"]);

/** This file's statements, named for the methods that run them. */
const s = {
  getRequest: `SELECT session_id AS "sessionId", request_id AS "requestId", fingerprint, answer, created_at AS "createdAt"
    FROM requests WHERE session_id = $1 AND request_id = $2`,
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
  };
}
