// The chat scenario on PostgreSQL, in a child process: one conversation of N turns (forkpoint's `s.turn([u, a])` on
// `openForkpoint({ postgres })`, or PostgresSaver's `put()` with the whole list), then the latest checkpoint read back.
// The database is the parent's (a fresh one per job); the parent measures its size after this process exits.
import { openPgSystem, type PgSystem } from "./pg-systems.js";
import { firstLastMedians, median, now, peakRssMB, timeMedian, type ContentKind } from "./util.js";

export interface PgChatFigures {
  n: number;
  totalMs: number;
  turnsPerSec: number;
  medianTurnMs: number;
  p99TurnMs: number;
  meanTurnMs: number;
  /** Medians of the first and the last 10% of the turns. */
  firstMs: number;
  lastMs: number;
  /** forkpoint `restore(latest)` (the verified read: every entry re-hashed), PostgresSaver `getTuple()`. */
  readLatestMs: number;
  /** This process's CPU time (user + system) per turn, ms: the client's share of a turn (the server's is not in it). */
  clientCpuMsPerTurn: number;
  turnsRssMB: number;
  /** Filled in by the parent: pg_database_size minus an empty fresh database's, and the system's tables alone. */
  dbBytes?: number;
  tablesBytes?: number;
  /** PostgresSaver only (parent): its message lists' bytes as serialized and as stored (TOAST-compressed). */
  listsRawBytes?: number;
  listsStoredBytes?: number;
}

export async function runPgChat(system: PgSystem, url: string, n: number, reps: number, kind?: ContentKind): Promise<PgChatFigures> {
  const h = await openPgSystem(system, url, kind);
  try {
    await h.ready();
    const c = await h.start("user-1", "bench chat");
    const turnMs: number[] = [];
    const cpu0 = process.cpuUsage();
    const t0 = now();
    for (let i = 0; i < n; i++) {
      const ts = now();
      await c.turn(i);
      turnMs.push(now() - ts);
    }
    const totalMs = now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const turnsRssMB = peakRssMB();
    const readLatestMs = await timeMedian(reps, () => c.readLatest(2 * n));
    return {
      n,
      totalMs,
      turnsPerSec: (n / totalMs) * 1000,
      medianTurnMs: median(turnMs),
      ...firstLastMedians(turnMs),
      readLatestMs,
      clientCpuMsPerTurn: (cpu.user + cpu.system) / 1000 / n,
      turnsRssMB,
    };
  } finally {
    await h.close();
  }
}
