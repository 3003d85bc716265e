// Many writers on one PostgreSQL database: this is one of the writer processes (the parent starts 8). It opens the
// system, starts its conversations, says "ready" and waits for the parent's "go" on stdin, so every writer starts
// together; then it runs its turns round-robin over its conversations (turn 1 of each, turn 2 of each, ...).
import { performance } from "node:perf_hooks";
import { openPgSystem, type PgSystem } from "./pg-systems.js";
import { now } from "./util.js";

export interface PgWriterResult {
  writer: number;
  /** Every turn's latency, in the order run (ms, rounded to the µs). */
  turnMs: number[];
  /** Wall-clock times (ms since the epoch, sub-ms): the parent's throughput is all turns over the first start to the last end. */
  startedAt: number;
  endedAt: number;
  /** This process's CPU time (user + system) over its timed turns, ms. */
  cpuMs: number;
  conversations: { id: string; userId: string }[];
}

const wallClock = () => performance.timeOrigin + performance.now();

function waitForGo(): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdin.once("data", () => {
      process.stdin.pause();
      resolve();
    });
    process.stdin.once("end", () => reject(new Error("the parent closed stdin before saying go")));
  });
}

export async function runPgWriter(
  system: PgSystem,
  url: string,
  writer: number,
  sessions: number,
  turns: number,
  barrier: boolean,
): Promise<PgWriterResult> {
  const h = await openPgSystem(system, url);
  try {
    await h.ready();
    const convs = [];
    for (let j = 0; j < sessions; j++) convs.push(await h.start(`w${writer}-u${j}`, `w${writer}-s${j}`));
    if (barrier) {
      process.stdout.write(JSON.stringify({ ready: true }) + "\n");
      await waitForGo();
    }
    const turnMs: number[] = [];
    const cpu0 = process.cpuUsage();
    const startedAt = wallClock();
    for (let i = 0; i < turns; i++) {
      for (const c of convs) {
        const ts = now();
        await c.turn(i);
        turnMs.push(Math.round((now() - ts) * 1000) / 1000);
      }
    }
    const endedAt = wallClock();
    const cpu = process.cpuUsage(cpu0);
    return {
      writer,
      turnMs,
      startedAt,
      endedAt,
      cpuMs: (cpu.user + cpu.system) / 1000,
      conversations: convs.map((c) => ({ id: c.id, userId: c.userId })),
    };
  } finally {
    await h.close();
  }
}

/** Opens the system once, alone, so its schema exists before the writers start (PostgresSaver's setup is not safe to race). */
export async function runPgPrepare(system: PgSystem, url: string): Promise<object> {
  const h = await openPgSystem(system, url);
  try {
    await h.ready();
    return {};
  } finally {
    await h.close();
  }
}

export interface PgVerifyResult {
  conversations: number;
  /** Messages read back through the system's own API (forkpoint `history()`, PostgresSaver `getTuple()`). */
  messages: number;
  /** Conversations whose read-back count is not 2 × turns. */
  short: number;
}

/** After the writers: every conversation read back through the system's API, in a fresh process. */
export async function runPgVerify(
  system: PgSystem,
  url: string,
  conversations: { id: string; userId: string }[],
  turns: number,
): Promise<PgVerifyResult> {
  const h = await openPgSystem(system, url);
  try {
    let messages = 0,
      short = 0;
    for (const c of conversations) {
      const m = await h.messagesOf(c);
      messages += m;
      if (m !== 2 * turns) short++;
    }
    return { conversations: conversations.length, messages, short };
  } finally {
    await h.close();
  }
}
