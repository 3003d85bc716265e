// retention: which checkpoints a session's retention policy keeps, weighed as checkpoints are made and in full by prune.
import type { CheckpointRow, RetentionRow, SessionRow, Step, Tx } from "../../store/port/index.js";
import { expireCheckpointsNow } from "../integrity/expiry.js";

/** A retention policy as stored with its session (durations in ms; absent rules are null or false). */
export interface StoredRetention {
  keepFirst: boolean;
  keepLast: number | null;
  onePerName: boolean;
  keepFor: number | null;
}

/** How many checkpoints that aged past `keepFor` one checkpoint weighs at most (prune weighs any left over). */
const AGED_PER_CHECKPOINT = 16;

export function storedRetention(text: string): StoredRetention {
  return JSON.parse(text) as StoredRetention;
}

/**
 * After the checkpoint `made` (the session's newest), weighs only the checkpoints that have just lost a reason to stay:
 * the one that was newest before it, the one pushed out of the last `keepLast`, the previous one of its name, and a few
 * that aged past `keepFor` since the last weighing (by time, from an index). Each is expired unless some rule still keeps it, so the cost does
 * not grow with the number of checkpoints the session keeps. Returns the ids expired.
 */
export function* retainAfterCheckpoint(tx: Tx, session: SessionRow, madeId: string, now: number): Step<string[]> {
  if (session.retention === null) return [];
  const policy = storedRetention(session.retention);
  const made = yield* tx.liveCheckpointAt(session.userId, session.id, now, 0);
  if (!made || made.id !== madeId) return [];
  const candidates = new Map<string, RetentionRow>();
  const add = (row: RetentionRow | undefined) => {
    if (row && row.id !== made.id) candidates.set(row.id, row);
  };
  add(yield* tx.liveCheckpointAt(session.userId, session.id, now, 1));
  if (policy.keepLast !== null && policy.keepLast > 1) add(yield* tx.liveCheckpointAt(session.userId, session.id, now, policy.keepLast));
  if (policy.onePerName) add(yield* tx.newestNamed(session.id, made.name, now, made.seq));
  if (policy.keepFor !== null) {
    const aged = yield* tx.agedCheckpoints(session.id, session.retentionAgedAt, now - policy.keepFor, now, AGED_PER_CHECKPOINT);
    for (const row of aged) add(row);
    const last = aged[aged.length - 1];
    if (last) yield* tx.setRetention(session.id, session.retention, last.createdAt);
  }
  const gone: string[] = [];
  for (const row of candidates.values()) if (!(yield* keeps(tx, session, policy, row, now))) gone.push(row.id);
  yield* expireCheckpointsNow(tx, gone, now);
  return gone;
}

/** Whether any rule keeps this live checkpoint now (each rule one index lookup). */
function* keeps(tx: Tx, session: SessionRow, policy: StoredRetention, row: RetentionRow, now: number): Step<boolean> {
  if (policy.keepFor !== null && row.createdAt > now - policy.keepFor) return true;
  if (policy.keepFirst && (yield* tx.firstCheckpointSeq(session.userId, session.id)) === row.seq) return true;
  if (policy.keepLast !== null && policy.keepLast > 0) {
    // Fewer than keepLast live ones: all of them are among the last keepLast.
    const nth = yield* tx.liveCheckpointAt(session.userId, session.id, now, policy.keepLast - 1);
    if (!nth || row.seq >= nth.seq) return true;
  }
  if (policy.onePerName && (yield* tx.newestNamed(session.id, row.name, now, Number.MAX_SAFE_INTEGER))?.id === row.id) return true;
  return yield* tx.checkpointInUse(session.id, row.id);
}

/**
 * `retainAfterCheckpoint` for a checkpoint another verb wrote (an edit's, an automatic one), given the session as that
 * verb has it: a row without a policy costs nothing more; otherwise the policy is read in this transaction.
 */
export function* retainAfterWrite(tx: Tx, session: { id: string; retention?: string | null }, madeId: string, now: number): Step<string[]> {
  if (session.retention === null) return [];
  const row = yield* tx.getSession(session.id);
  if (!row || row.retention === null) return [];
  return yield* retainAfterCheckpoint(tx, row, madeId, now);
}

/**
 * Weighs every live checkpoint of the session against its policy (when it is set, and by prune) and expires those no
 * rule keeps, but never the newest, which the next checkpoint weighs (as `retainAfterCheckpoint` does). Returns the
 * ids expired.
 */
export function* retainAll(tx: Tx, session: SessionRow, now: number): Step<string[]> {
  if (session.retention === null) return [];
  const policy = storedRetention(session.retention);
  const all: CheckpointRow[] = yield* tx.sessionCheckpoints(session.userId, session.id);
  const live = all.filter((c) => c.expiresAt === null || c.expiresAt > now);
  const kept = new Set<string>();
  // The newest is weighed when the next checkpoint is made (see retainAfterCheckpoint): until then, it stays.
  const newest = live[live.length - 1];
  if (newest) kept.add(newest.id);
  if (policy.keepFirst && all[0]) kept.add(all[0].id);
  if (policy.keepLast !== null) for (const c of live.slice(Math.max(0, live.length - policy.keepLast))) kept.add(c.id);
  if (policy.onePerName) {
    const newest = new Map<string | null, string>();
    for (const c of live) newest.set(c.name, c.id);
    for (const id of newest.values()) kept.add(id);
  }
  let agedAt = session.retentionAgedAt;
  if (policy.keepFor !== null) {
    for (const c of live) {
      if (c.createdAt > now - policy.keepFor) kept.add(c.id);
      else agedAt = Math.max(agedAt, c.createdAt);
    }
  }
  // Every checkpoint up to here has been weighed against keepFor: the next checkpoints resume after it.
  if (agedAt !== session.retentionAgedAt) yield* tx.setRetention(session.id, session.retention, agedAt);
  const gone: string[] = [];
  for (const c of live) if (!kept.has(c.id) && !(yield* tx.checkpointInUse(session.id, c.id))) gone.push(c.id);
  yield* expireCheckpointsNow(tx, gone, now);
  return gone;
}
