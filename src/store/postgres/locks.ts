// Advisory lock keys of a write unit's scope: a session's own key, and one key every session write shares.
import { createHash } from "node:crypto";
import type { WriteScope } from "../port/index.js";

/** Held shared by every session write and exclusive by operator calls that cross sessions ("forkpoint" in ASCII). */
export const GLOBAL_KEY = 0x666f726b706f696en;
/** Held while migrating: servers that start at once migrate one after another. */
export const MIGRATE_KEY = 0x666f726b6d696772n;

/** A session's 64-bit key: the first 8 bytes of its id's SHA-256, stable across versions and servers. */
export function sessionKey(sessionId: string): bigint {
  return createHash("sha256").update(sessionId).digest().readBigInt64BE(0);
}

/**
 * The lock statement of one session's writes, by session id: a session's turns take the same one again and again. A
 * plain Map, emptied when full (a statement is cheap to make again; an LRU cache's bookkeeping costs every turn).
 */
const sessionLocks = new Map<string, string>();
const MAX_SESSION_LOCKS = 10_000;

/**
 * The statements that take `scope`'s locks, for the transaction's first round trip, one after another (SQL leaves the
 * order of calls within one statement open). Sessions are locked in key order, so two units over overlapping sessions
 * never wait on each other crosswise. Keys are integers: inlining them is safe.
 */
export function lockStatement(scope: WriteScope): string {
  if ("global" in scope) return `SELECT FROM pg_advisory_xact_lock(${GLOBAL_KEY})`;
  if ("sessionId" in scope) {
    let statement = sessionLocks.get(scope.sessionId);
    if (statement === undefined) {
      if (sessionLocks.size >= MAX_SESSION_LOCKS) sessionLocks.clear();
      sessionLocks.set(scope.sessionId, (statement = locking([sessionKey(scope.sessionId)])));
    }
    return statement;
  }
  return locking([...new Set(scope.sessionIds.map(sessionKey))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
}

function locking(keys: bigint[]): string {
  // No column: the driver has no field to describe nor value to parse in the answer.
  return [`SELECT FROM pg_advisory_xact_lock_shared(${GLOBAL_KEY})`, ...keys.map((k) => `SELECT FROM pg_advisory_xact_lock(${k})`)].join(
    "; ",
  );
}
