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

/** The checkpoint just made, as its verb has it. */
export interface MadeCheckpoint {
  id: string;
  branchId: string;
}

/** How many checkpoints that aged past `keepFor` one checkpoint weighs at most (prune weighs any left over). */
const AGED_PER_CHECKPOINT = 16;

export function storedRetention(text: string): StoredRetention {
  return JSON.parse(text) as StoredRetention;
}

/**
 * After the checkpoint `made` (the newest of its branch), weighs only the checkpoints that have just lost a reason to
 * stay: the one that was its branch's newest before it, the one it pushed out of its branch's last `keepLast`, the
 * previous one of its name, and a few that aged past `keepFor` since the last weighing (by time, from an index). Each is
 * expired unless some rule still keeps it, so the cost does not grow with the number of checkpoints the session keeps
 * (a branch's last `keepLast` are read, not the others). Returns the ids expired.
 */
export function* retainAfterCheckpoint(tx: Tx, session: SessionRow, madeRow: MadeCheckpoint, now: number): Step<string[]> {
  if (session.retention === null) return [];
  const policy = storedRetention(session.retention);
  const made = yield* tx.newestOnBranch(madeRow.branchId, now, Number.MAX_SAFE_INTEGER);
  if (!made || made.id !== madeRow.id) return [];
  const candidates = new Map<string, RetentionRow>();
  const add = (c: RetentionRow | undefined) => {
    if (c && c.id !== made.id) candidates.set(c.id, c);
  };
  add(yield* tx.newestOnBranch(made.branchId, now, made.seq));
  if (policy.keepLast !== null && policy.keepLast > 0) add(yield* pushedOut(tx, made, policy.keepLast, now));
  if (policy.onePerName) add(yield* tx.newestNamed(session.id, made.name, now, made.seq));
  if (policy.keepFor !== null) {
    const aged = yield* tx.agedCheckpoints(session.id, session.retentionAgedAt, now - policy.keepFor, now, AGED_PER_CHECKPOINT);
    for (const c of aged) add(c);
    const last = aged[aged.length - 1];
    if (last) yield* tx.setRetention(session.id, session.retention, last.createdAt);
  }
  const lasts = new Map<string, Set<string>>();
  const gone: string[] = [];
  for (const c of candidates.values()) if (!(yield* keeps(tx, session, policy, c, now, lasts))) gone.push(c.id);
  yield* expireCheckpointsNow(tx, gone, now);
  return gone;
}

/**
 * The checkpoint `made` pushed out of its branch's last `keepLast` (manual ones before automatic ones), if any. Only
 * checkpoints that were among them are read: a manual `made` reads the branch's `keepLast + 1` newest manual ones (or
 * fewer, and then automatic ones), an automatic one the manual ones up to `keepLast` and, when fewer, automatic ones.
 */
function* pushedOut(tx: Tx, made: RetentionRow, keepLast: number, now: number): Step<RetentionRow | undefined> {
  const manual = yield* tx.branchCheckpoints(made.branchId, false, now, made.auto ? keepLast : keepLast + 1);
  if (manual.length > keepLast) return manual[keepLast];
  // An automatic one behind keepLast manual ones is not among the last: it pushed none out.
  if (made.auto && manual.length === keepLast) return undefined;
  const auto = yield* tx.branchCheckpoints(made.branchId, true, now, keepLast + 1 - manual.length);
  return auto[keepLast - manual.length];
}

/**
 * The ids of a branch's last `keepLast` live checkpoints as retention counts them: its newest manual ones and, when
 * fewer than `keepLast`, its newest automatic ones after them (automatic ones expire first).
 */
function* lastOfBranch(tx: Tx, branchId: string, keepLast: number, now: number): Step<Set<string>> {
  const manual = yield* tx.branchCheckpoints(branchId, false, now, keepLast);
  const auto = manual.length < keepLast ? yield* tx.branchCheckpoints(branchId, true, now, keepLast - manual.length) : [];
  return new Set([...manual, ...auto].map((c) => c.id));
}

/** Whether any rule keeps this live checkpoint now (each rule an index lookup; `lasts` keeps each branch's last read). */
function* keeps(
  tx: Tx,
  session: SessionRow,
  policy: StoredRetention,
  row: RetentionRow,
  now: number,
  lasts: Map<string, Set<string>>,
): Step<boolean> {
  if (policy.keepFor !== null && row.createdAt > now - policy.keepFor) return true;
  if (policy.keepFirst && (yield* tx.firstCheckpointSeq(session.userId, session.id)) === row.seq) return true;
  // The newest of its branch stays until the next checkpoint on that branch weighs it.
  if ((yield* tx.newestOnBranch(row.branchId, now, Number.MAX_SAFE_INTEGER))?.id === row.id) return true;
  if (policy.keepLast !== null && policy.keepLast > 0) {
    let last = lasts.get(row.branchId);
    if (!last) lasts.set(row.branchId, (last = yield* lastOfBranch(tx, row.branchId, policy.keepLast, now)));
    if (last.has(row.id)) return true;
  }
  if (policy.onePerName && (yield* tx.newestNamed(session.id, row.name, now, Number.MAX_SAFE_INTEGER))?.id === row.id) return true;
  return yield* tx.checkpointInUse(session.id, row.id);
}

/**
 * `retainAfterCheckpoint` for a checkpoint another verb wrote (an edit's, an automatic one), given the session as that
 * verb has it: a row without a policy costs nothing more; otherwise the policy is read in this transaction.
 */
export function* retainAfterWrite(
  tx: Tx,
  session: { id: string; retention?: string | null },
  made: MadeCheckpoint,
  now: number,
): Step<string[]> {
  if (session.retention === null) return [];
  const row = yield* tx.getSession(session.id);
  if (!row || row.retention === null) return [];
  return yield* retainAfterCheckpoint(tx, row, made, now);
}

/**
 * Weighs every live checkpoint of the session against its policy (when it is set, and by prune) and expires those no
 * rule keeps, but never a branch's newest, which the next checkpoint on that branch weighs (as `retainAfterCheckpoint`
 * does). Returns the ids expired.
 */
export function* retainAll(tx: Tx, session: SessionRow, now: number): Step<string[]> {
  if (session.retention === null) return [];
  const policy = storedRetention(session.retention);
  const all: CheckpointRow[] = yield* tx.sessionCheckpoints(session.userId, session.id);
  const live = all.filter((c) => c.expiresAt === null || c.expiresAt > now);
  const kept = new Set<string>();
  const branches = new Map<string, CheckpointRow[]>();
  for (const c of live) {
    const rows = branches.get(c.branchId);
    if (rows) rows.push(c);
    else branches.set(c.branchId, [c]);
  }
  for (const rows of branches.values()) {
    // Each branch's newest is weighed when the next checkpoint on it is made (see retainAfterCheckpoint): until then, it stays.
    kept.add(rows[rows.length - 1]!.id);
    if (policy.keepLast === null) continue;
    // Its last keepLast: the newest manual ones, then the newest automatic ones (automatic ones expire first).
    const ranked = [...rows.filter((c) => !c.auto).reverse(), ...rows.filter((c) => c.auto).reverse()];
    for (const c of ranked.slice(0, policy.keepLast)) kept.add(c.id);
  }
  if (policy.keepFirst && all[0]) kept.add(all[0].id);
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
