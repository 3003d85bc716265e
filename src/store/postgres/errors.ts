// node-postgres's errors as the typed errors of the API.
import { ConflictError, DatabaseError, ValidationError } from "../../models/errors.js";
import { RequestTakenError } from "../port/index.js";

/** TLS refused: the server has none, or its certificate is not one the connection's `ssl` settings accept. */
const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_)/;

/** Socket-level failures: the server is unreachable or the connection dropped. */
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "ETIMEDOUT", "EHOSTUNREACH", "EPIPE", "EAI_AGAIN"]);

/** Translates driver errors into the typed errors of the API; other errors pass through. */
export function translate(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const code = (error as { code?: unknown }).code;
  const message = error.message;
  // A socket directory's missing socket (ENOENT from connect): no server there, as ECONNREFUSED says over TCP.
  const noSocket = code === "ENOENT" && (error as { syscall?: unknown }).syscall === "connect";
  if ((typeof code === "string" && NETWORK_CODES.has(code)) || noSocket) {
    return new DatabaseError("CANNOT_CONNECT", `cannot reach the PostgreSQL server: ${message}`, { cause: error });
  }
  // Settings, not an outage: asking again gets the same answer.
  if (/server does not support SSL/i.test(message) || (typeof code === "string" && TLS_CODES.test(code))) {
    return new DatabaseError("CANNOT_OPEN", `cannot open a TLS (SSL) connection to the PostgreSQL server: ${message}`, { cause: error });
  }
  // node-postgres's words when the server asks for a SCRAM password and the settings give none: settings, as 28P01 is.
  if (/^SASL: /.test(message)) {
    return new DatabaseError("CANNOT_OPEN", `cannot sign in to the PostgreSQL server: ${message}`, { cause: error });
  }
  // A pg.Pool the app passed in and has ended since (at its shutdown, say): forkpoint cannot use it any more.
  if (/Cannot use a pool after calling end on the pool/i.test(message)) {
    return new DatabaseError("CLOSED", `the app's pg.Pool was ended: ${message}`, { cause: error });
  }
  // pg-pool's words when a call waited past `connectionTimeoutMillis` for a connection, every one of the pool's in use:
  // the server is up, the pool is busy (as SQLite's busy timeout passing is).
  if (/timeout exceeded when trying to connect/i.test(message)) {
    return new DatabaseError("BUSY", `every connection of the pool stayed in use: ${message}`, { cause: error });
  }
  if (/Connection terminated|Client has encountered a connection error/i.test(message)) {
    return new DatabaseError("CANNOT_CONNECT", `lost the connection to the PostgreSQL server: ${message}`, { cause: error });
  }
  if (typeof code !== "string" || !/^[0-9A-Z]{5}$/.test(code)) return error;
  // SQLSTATE classes: https://www.postgresql.org/docs/current/errcodes-appendix.html
  // The request ledger's primary key: the session applied that request id already (see RequestsTx.insertRequest).
  if (code === "23505" && (error as { table?: unknown }).table === "requests") return new RequestTakenError({ cause: error });
  // The same, for a turn's request kept on its checkpoint's row.
  if (code === "23505" && (error as { constraint?: unknown }).constraint === "checkpoints_request")
    return new RequestTakenError({ cause: error });
  if (code === "23505") return new ConflictError(`already exists: ${message}`, "ALREADY_EXISTS");
  // Text the API's checks let through that the server cannot store (U+0000 is refused before a unit starts).
  if (code === "22021" || code === "22P05") return new ValidationError("text", `cannot be stored as text: ${message}`, "MALFORMED_TEXT");
  if (code === "25006") return new DatabaseError("READ_ONLY", "the database is read-only: writes are refused", { cause: error });
  // A named statement met on a server connection another client prepared it on, or gone from the one it was prepared
  // on: a transaction-mode pooler hands connections out per transaction. Settings: asking again meets it again.
  if (code === "42P05" || code === "26000")
    return new DatabaseError(
      "CANNOT_OPEN",
      `${message}: behind a transaction-mode pooler (PgBouncer before 1.21, Supavisor, a cloud provider's pooler), open with preparedStatements: false (the CLI's --no-prepared-statements)`,
      { cause: error },
    );
  // A statement_timeout (or a cancel request) is not contention: the app's own limit ended the statement.
  if (code === "57014")
    return new DatabaseError("TIMEOUT", `the statement was canceled (statement_timeout, or a cancel request): ${message}`, {
      cause: error,
    });
  if (code === "55P03" || code === "40P01" || code === "40001") {
    return new DatabaseError("BUSY", `the database stayed locked by another writer: ${message}`, { cause: error });
  }
  // 55000 with these words: the database's connections are switched off (ALLOW_CONNECTIONS false, for maintenance).
  const closedToConnections = code === "55000" && /not currently accepting connections/i.test(message);
  if (code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03" || code === "53300" || closedToConnections) {
    return new DatabaseError("CANNOT_CONNECT", `cannot use the PostgreSQL server: ${message}`, { cause: error });
  }
  if (code.startsWith("28") || code === "3D000") {
    return new DatabaseError("CANNOT_OPEN", `cannot open the PostgreSQL database: ${message}`, { cause: error });
  }
  if (code === "XX001" || code === "XX002") {
    return new DatabaseError("CORRUPT", `the database is damaged: ${message}`, { cause: error });
  }
  return error;
}

/** Failures that a unit of work may run again from its start: nothing of it was committed. */
export function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === "40001" || code === "40P01";
}
