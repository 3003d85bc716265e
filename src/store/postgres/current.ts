// A session's current branch and head as this store last wrote them: a write unit starts from them without a read,
// and the server checks them first thing in the unit's one round trip (a turn is then one round trip, not two).
import type { BranchRow, CurrentRow, HeadRow, SessionRow } from "../port/index.js";
import { BRANCH_FIELDS, HEAD_COLS, HEAD_FIELDS, select, slice } from "./columns.js";

/** What `currentOf` read, with the server's stamp of the session and branch rows it came from. */
export interface Known {
  readonly row: CurrentRow;
  /** The versions of the session's and the current branch's rows (`STAMP`): any write to either changes it. */
  readonly stamp: string;
  /**
   * Another server wrote the session since this one last did: its units read first (two round trips) instead of
   * failing the check again and again, until a read finds the session as this server left it.
   */
  readonly contested?: boolean;
}

/**
 * The stamp of `s` (sessions) and `b` (its current branch), the same expression in the read and in the check: the
 * transactions that wrote the two row versions. Any update makes a new version (a rewrite of the same values too, which
 * costs a fresh read, never a wrong one), and reading it costs nothing, unlike hashing the rows as text.
 */
export const STAMP = "(s.xmin::text || ':' || b.xmin::text)";

/** The time of a session's newest checkpoint (0: none), given SQL for its user and id: a new checkpoint's is never before it. */
export const lastCheckpointAt = (userId: string, sessionId: string) =>
  `coalesce((SELECT c.created_at FROM checkpoints c WHERE c.user_id = ${userId} AND c.session_id = ${sessionId}
  ORDER BY c.seq DESC LIMIT 1), 0)`;
/** That of the session `s`. */
const LAST_CHECKPOINT_AT = lastCheckpointAt("s.user_id", "s.id");
/** Whether session `s` has a move journaled and unfinished: only one with tools or a workspace can (see `moves_running`). */
const MOVING = `((s.has_tools OR s.has_workspace) AND EXISTS (SELECT 1 FROM moves m WHERE m.session_id = s.id AND m.status = 'running'))`;

const SESSION_CURRENT_FIELDS = [
  ["seq", "seq"],
  ["id", "id"],
  ["userId", "userId"],
  ["title", "title"],
  ["metadata", "metadata"],
  ["currentBranchId", "currentBranchId"],
  ["originSessionId", "originSessionId"],
  ["originCheckpointId", "originCheckpointId"],
  ["hasTools", "hasTools"],
  ["hasWorkspace", "hasWorkspace"],
  ["createdAt", "createdAt"],
  ["updatedAt", "updatedAt"],
  ["retention", "retention"],
  ["retentionAgedAt", "retentionAgedAt"],
] as const;

/** A session, its current branch and that branch's last own entry, its newest checkpoint's time and its stamp. */
export const CURRENT_OF = `SELECT s.seq, s.id, s.user_id, s.title, s.metadata, s.current_branch_id, s.origin_session_id, s.origin_checkpoint_id,
    s.has_tools, s.has_workspace, s.created_at, s.updated_at, s.retention, s.retention_aged_at, ${select("b", BRANCH_FIELDS)}, ${HEAD_COLS},
    ${select("f", HEAD_FIELDS)},
    -- In the same round trip: a checkpoint written in this unit is never before the session's newest.
    ${MOVING}, ${LAST_CHECKPOINT_AT}, ${STAMP}
  FROM sessions s JOIN branches b ON b.id = s.current_branch_id
  -- The head entry as a lateral top-1 on (branch_id, position): a generic plan of "position = (SELECT max ...)"
  -- may pick another index of entries and scan the whole branch.
  LEFT JOIN LATERAL (SELECT * FROM entries WHERE branch_id = b.id ORDER BY position DESC LIMIT 1) e ON true
  -- A branch with no entry of its own (a rollback's, until its first turn) starts from its fork entry.
  LEFT JOIN entries f ON e.id IS NULL AND f.id = b.fork_entry_id
  WHERE s.id = $1`;

/** A CURRENT_OF row as the port's CurrentRow (with `session.lastCheckpointAt`), and its stamp. */
export function currentFromTuple(t: unknown[]): { row: CurrentRow; stamp: string } {
  const n = SESSION_CURRENT_FIELDS.length;
  const session = slice<SessionRow>(t, 0, SESSION_CURRENT_FIELDS)!;
  session.lastCheckpointAt = t.at(-2) as number;
  session.moving = t.at(-3) === true;
  const at = n + BRANCH_FIELDS.length;
  const row: CurrentRow = { session, branch: slice<BranchRow>(t, n, BRANCH_FIELDS)!, last: slice<HeadRow>(t, at, HEAD_FIELDS) };
  const base = slice<HeadRow>(t, at + HEAD_FIELDS.length, HEAD_FIELDS);
  if (base) row.base = base;
  return { row, stamp: t.at(-1) as string };
}

/**
 * Fails the transaction unless the session is still as known: the stamp, the id of the current branch's last own
 * entry (entries never change once written, so the id stands for the whole head), its newest checkpoint's time and
 * whether a move of it is unfinished (another server's journal does not touch the session's row). The failure is `STALE_CODE`; the
 * store forgets what it knew and runs the unit again from a fresh read. It answers no column: nothing to describe or parse.
 * The function that raises is called only on a failure (a call per unit costs more than the check's reads).
 */
export const EXPECT_CURRENT = `SELECT WHERE CASE WHEN EXISTS (
  SELECT 1 FROM sessions s JOIN branches b ON b.id = s.current_branch_id
  WHERE s.id = $1 AND ${STAMP} = $2
    AND (SELECT e.id FROM entries e WHERE e.branch_id = b.id ORDER BY e.position DESC LIMIT 1) IS NOT DISTINCT FROM $3::text
    AND ${LAST_CHECKPOINT_AT} = $4::float8 AND ${MOVING} = $5::boolean) THEN true ELSE forkpoint_expect_current(false) END`;

/** The SQLSTATE `forkpoint_expect_current` raises (a migration defines it). */
const STALE_CODE = "FP409";

/** Whether `error` is a failed check: another server changed the session since this one last wrote it. */
export const isStale = (error: unknown) => (error as { code?: unknown } | null)?.code === STALE_CODE;

/** A copy of `row` (its session, branch and head objects too): what a unit is given may be changed by it. */
export const copyOf = (row: CurrentRow): CurrentRow => ({
  session: { ...row.session },
  branch: { ...row.branch },
  last: row.last && { ...row.last },
  ...(row.base ? { base: { ...row.base } } : {}),
});

/** How many sessions a store knows the state of at most. */
const MAX_KNOWN = 1_000;

/** Per session, what this store knows of it: set after a unit commits having changed nothing but the head. */
export class CurrentCache {
  /**
   * The sessions a server is busy with: beyond them a write reads its session first, as without this cache. A Map in
   * the order sessions were last written (every unit that commits on a known session sets it again), the oldest
   * dropped first: a plain Map costs a turn less than an LRU cache's bookkeeping on every read and write.
   */
  readonly #known = new Map<string, Known>();

  get(sessionId: string): Known | undefined {
    return this.#known.get(sessionId);
  }

  set(sessionId: string, known: Known): void {
    this.#known.delete(sessionId);
    this.#known.set(sessionId, known);
    if (this.#known.size > MAX_KNOWN) this.#known.delete(this.#known.keys().next().value!);
  }

  forget(sessionId: string): void {
    this.#known.delete(sessionId);
  }

  clear(): void {
    this.#known.clear();
  }
}

/** What one unit read of a session's current state, and the head it wrote on the current branch since. */
export interface Seen {
  known: Known;
  head: HeadRow | undefined;
  /** The time of the newest checkpoint the unit wrote in the session, if any. */
  lastCheckpointAt: number | undefined;
  /** Whether the unit took `known` from the cache, unread (the server checks it). */
  assumed: boolean;
}

/** `known` deeply frozen: units share its objects, and none may change what the next unit starts from. */
export function frozen(known: Known): Known {
  const { session, branch, last, base } = known.row;
  Object.freeze(session);
  Object.freeze(branch);
  if (last) Object.freeze(last);
  if (base) Object.freeze(base);
  const row: CurrentRow = base ? { session, branch, last, base } : { session, branch, last };
  return Object.freeze({ row: Object.freeze(row), stamp: known.stamp, contested: known.contested === true });
}
