// The request ledger: SQLite's statements and the port's RequestsTx.
import type Database from "better-sqlite3";
import type { RequestRow, RequestsTx } from "../port/index.js";
import { prepare } from "./object-rows.js";

export function requestsTx(db: Database.Database): RequestsTx {
  const s = {
    // A taken id fails the insert on the primary key: the store's `translate` makes that a RequestTakenError.
    insert: prepare(db, `INSERT INTO requests (session_id, request_id, fingerprint, answer, created_at) VALUES (?, ?, ?, ?, ?)`),
    get: prepare(
      db,
      `SELECT session_id AS sessionId, request_id AS requestId, fingerprint, answer, created_at AS createdAt
      FROM requests WHERE session_id = ? AND request_id = ?`,
    ),
  };
  return {
    *insertRequest(r: RequestRow) {
      s.insert.run(r.sessionId, r.requestId, r.fingerprint, r.answer, r.createdAt);
    },
    *getRequest(sessionId: string, requestId: string) {
      return s.get.get(sessionId, requestId) as RequestRow | undefined;
    },
  };
}
