// better-sqlite3's errors as the typed errors of the API.
import { DatabaseError } from "../../models/errors.js";
import { RequestTakenError } from "../port/index.js";

/** Translates driver errors into the typed errors of the API; other errors pass through. */
export function translate(error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string" || !code.startsWith("SQLITE_")) return error;
  // The request ledger's primary key: the session applied that request id already (see RequestsTx.insertRequest).
  if (code === "SQLITE_CONSTRAINT_PRIMARYKEY" && /\brequests\./.test((error as Error).message))
    return new RequestTakenError({ cause: error });
  // The same, for a turn's request kept on its checkpoint's row (the partial index `checkpoints_request`).
  if (code === "SQLITE_CONSTRAINT_UNIQUE" && /\bcheckpoints\.request_id\b/.test((error as Error).message))
    return new RequestTakenError({ cause: error });
  if (code.startsWith("SQLITE_READONLY"))
    return new DatabaseError("READ_ONLY", "the database is read-only: writes are refused", { cause: error });
  if (code.startsWith("SQLITE_BUSY"))
    return new DatabaseError("BUSY", "the database stayed locked by another writer past the busy timeout", { cause: error });
  if (code === "SQLITE_CORRUPT" || code === "SQLITE_NOTADB")
    return new DatabaseError("CORRUPT", `the database file is damaged: ${(error as Error).message}`, { cause: error });
  return error;
}
