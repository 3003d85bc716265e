// Shared helpers for the benchmark: temp dirs, timing, statistics, message payloads, file sizes.
import { mkdtempSync, rmSync, statSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A fresh temp directory and a cleanup function that removes it. */
export function tempDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `forkpoint-bench-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Milliseconds since an arbitrary origin, sub-microsecond resolution. */
export function now(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Nearest-rank percentile, p in [0, 100]. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const rank = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[rank]!;
}

/** Peak RSS of this process so far, in MB. */
export function peakRssMB(): number {
  return process.resourceUsage().maxRSS / 1024;
}

/** Medians of the per-turn times over the first and the last 10% of turns (at least one turn each). */
export function firstLastMedians(turnMs: readonly number[]): { firstMs: number; lastMs: number; meanTurnMs: number; p99TurnMs: number } {
  const k = Math.max(1, Math.floor(turnMs.length / 10));
  return {
    firstMs: median(turnMs.slice(0, k)),
    lastMs: median(turnMs.slice(turnMs.length - k)),
    meanTurnMs: turnMs.reduce((a, b) => a + b, 0) / turnMs.length,
    p99TurnMs: percentile(turnMs, 99),
  };
}

/** Runs `turn(0)` … `turn(n - 1)` (synchronous: the floors' raw transactions), timing each and the whole. */
export function timeSyncTurns(n: number, turn: (i: number) => void): { totalMs: number } & ReturnType<typeof firstLastMedians> {
  const turnMs: number[] = [];
  const t0 = now();
  for (let i = 0; i < n; i++) {
    const ts = now();
    turn(i);
    turnMs.push(now() - ts);
  }
  return { totalMs: now() - t0, ...firstLastMedians(turnMs) };
}

/** ~200 bytes of message content for turn i (distinct per turn, so nothing dedupes it away). */
export function content(i: number, role: "user" | "assistant"): string {
  const head = `${role} turn ${i}: `;
  const filler =
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip.";
  return (head + filler).slice(0, 200);
}

/** Pseudo-words from syllables, seeded: a vocabulary of 170 words, the same in every run. */
const VOCABULARY = (() => {
  const syllables = ["ka", "lo", "mi", "ren", "to", "sa", "vel", "qu", "dor", "an", "is", "pe", "mur", "ti", "gra", "on"];
  let seed = 0x2f6b_9a1d;
  const next = () => ((seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0), seed);
  const words = new Set<string>();
  while (words.size < 170) words.add(Array.from({ length: 1 + (next() % 3) }, () => syllables[next() % syllables.length]).join(""));
  return [...words];
})();

/**
 * ~200 bytes of words for turn i, drawn from VOCABULARY by a generator seeded with (i, role): text that repeats its
 * words as language does, but no run of it as `content`'s filler does (PostgreSQL's TOAST compresses a repeated filler
 * in a whole-list value 24-32×, which says more about the filler than about a store).
 */
export function wordsContent(i: number, role: "user" | "assistant"): string {
  let seed = (i * 2 + (role === "user" ? 0 : 1) + 1) * 0x9e37_79b1;
  const next = () => ((seed = (Math.imul(seed ^ (seed >>> 13), 0x5bd1e995) + 0x7f4a7c15) >>> 0), seed);
  let text = `${role} turn ${i}:`;
  while (text.length < 200) text += " " + VOCABULARY[next() % VOCABULARY.length];
  return text.slice(0, 200);
}

/** Which message text a chat writes: `content`'s filler (the default) or `wordsContent`. */
export type ContentKind = "filler" | "words";
export const contentOf = (kind: ContentKind = "filler") => (kind === "words" ? wordsContent : content);

/** Size in bytes of a SQLite database file plus its WAL (the caller checkpoints the WAL first). */
export function dbBytes(file: string): number {
  let total = 0;
  for (const f of [file, `${file}-wal`]) if (existsSync(f)) total += statSync(f).size;
  return total;
}

/** Time an async function once, in ms. */
export async function timeOnce(fn: () => unknown): Promise<number> {
  const t0 = now();
  await fn();
  return now() - t0;
}

/**
 * How sub-millisecond operations (rollback, edit, one write transaction, a short listing) are timed, the same for
 * every system: the median of the first `cold` calls of that code path (V8 still interpreting it), then, after
 * `warmup` more untimed calls, the median of `warm` calls (optimized: what a long-running server sees).
 */
export const SMALL_OP = { cold: 21, warmup: 50, warm: 51 } as const;

/** Times a sub-millisecond operation as `SMALL_OP` says. */
export async function timeSmallOp(fn: (i: number) => unknown): Promise<{ coldMs: number; warmMs: number }> {
  const coldMs = await timeMedian(SMALL_OP.cold, fn);
  const warmMs = await timeWarmMedian(SMALL_OP.warm, (i) => fn(SMALL_OP.cold + i), SMALL_OP.warmup);
  return { coldMs, warmMs };
}

/** `timeMedian` after a few untimed calls, so every system is measured with its code paths warm (JIT, caches). */
export async function timeWarmMedian(reps: number, fn: (i: number) => unknown, warmup: number): Promise<number> {
  for (let i = 0; i < warmup; i++) await fn(reps + i);
  return timeMedian(reps, fn);
}

/** Median time of `reps` calls of fn, in ms. */
export async function timeMedian(reps: number, fn: (i: number) => unknown): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = now();
    await fn(i);
    xs.push(now() - t0);
  }
  return median(xs);
}

/** Figures of one chat run (one system, one N). A figure a system cannot produce is null. */
export interface ChatFigures {
  n: number;
  totalMs: number;
  firstMs: number;
  lastMs: number;
  meanTurnMs: number;
  p99TurnMs: number;
  dbBytes: number;
  readLatestMs: number | null;
  historyMs: number | null;
  list10Ms: number | null;
  /** Steady state (see SMALL_OP); the `Cold` figures are the first calls. */
  rollbackMs: number | null;
  rollbackColdMs: number | null;
  editMs: number | null;
  editColdMs: number | null;
  writeTxMs: number | null;
  /**
   * forkpoint only: the floor's one write transaction (`floorWriteTx`), timed in the same process right after its
   * rollback (resp. edit), the same way (steady state).
   */
  rollbackFloorMs: number | null;
  editFloorMs: number | null;
  /** This run's steady-state rollback (resp. edit) over the floor transaction timed right after it: the target's ratio. */
  rollbackVsFloor: number | null;
  editVsFloor: number | null;
  /** Peak RSS (MB) of the process at the end of the turns, before the reads materialize whole histories. */
  turnsRssMB: number;
  notes: string[];
}

export function emptyChat(n: number): ChatFigures {
  return {
    n,
    totalMs: NaN,
    firstMs: NaN,
    lastMs: NaN,
    meanTurnMs: NaN,
    p99TurnMs: NaN,
    dbBytes: NaN,
    readLatestMs: null,
    historyMs: null,
    list10Ms: null,
    rollbackMs: null,
    rollbackColdMs: null,
    editMs: null,
    editColdMs: null,
    writeTxMs: null,
    rollbackFloorMs: null,
    editFloorMs: null,
    rollbackVsFloor: null,
    editVsFloor: null,
    turnsRssMB: NaN,
    notes: [],
  };
}

/** Repetitions of each single read/rollback/edit: fewer when each one materializes a huge history. */
export function opReps(n: number, reps: number): number {
  return n >= 100_000 ? Math.min(reps, 3) : reps;
}

/**
 * Turns alternately without and with a request id (so the machine's drift hits both alike), after a warm-up of `n / 4`:
 * the median turn of each kind (issue 31). `turn(i, asRequest)` makes turn `i`.
 */
export async function alternatingRequests(
  n: number,
  turn: (i: number, asRequest: boolean) => unknown,
): Promise<{ turns: number; plainMs: number; requestMs: number; ratio: number }> {
  const plain: number[] = [];
  const withId: number[] = [];
  const warmUp = Math.floor(n / 4);
  for (let i = 0; i < warmUp + 2 * n; i++) {
    const asRequest = i % 2 === 1;
    const t = now();
    await turn(i, asRequest);
    const ms = now() - t;
    if (i >= warmUp) (asRequest ? withId : plain).push(ms);
  }
  const plainMs = median(plain);
  const requestMs = median(withId);
  return { turns: plain.length, plainMs, requestMs, ratio: requestMs / plainMs };
}
