// forkpoint through its public API (DESIGN.md §3): chat, history read, many-users pages, tool rollback.
import Database from "better-sqlite3";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { floorWriteTx, rng, type PageFigures } from "./floor.js";
import {
  alternatingRequests,
  content,
  dbBytes,
  emptyChat,
  firstLastMedians,
  median,
  opReps,
  peakRssMB,
  now,
  percentile,
  tempDir,
  timeMedian,
  timeSmallOp,
  type ChatFigures,
} from "./util.js";

// Loose local views of the API, so this file runs against whatever the engine exports today.
interface Msg {
  id: string;
  position: number;
}
interface Cp {
  id: string;
}
interface Page {
  items: unknown[];
  nextCursor: string | null;
}
interface Session {
  id: string;
  append(m: unknown): Promise<Msg[]>;
  turn(m: unknown, cp: { name: string }, o?: { requestId: string }): Promise<{ messages: Msg[]; checkpoint: Cp }>;
  checkpoint(o: { name: string }): Promise<Cp>;
  restore(id: string): Promise<{ history: unknown[] }>;
  history(): Promise<unknown[]>;
  rollback(id: string): Promise<{ undone: unknown[] }>;
  edit(id: string, m: unknown): Promise<unknown>;
  recordToolCall(c: unknown): Promise<unknown>;
}
interface Fp {
  createSession(o: { userId: string; title: string }): Promise<Session>;
  listCheckpoints(o: { userId: string; limit: number; cursor?: string | null }): Promise<Page>;
  close(): Promise<void>;
}
interface Api {
  openForkpoint(o: { path: string; tools?: unknown[]; walWorker?: boolean }): Fp;
  defineTool?(t: unknown): unknown;
}

// Beside the sources (tsx) or in .bench-build/ (compiled by bench/compile.ts).
const INDEX = ["../src/index.ts", "../src/index.js"].map((f) => fileURLToPath(new URL(f, import.meta.url)));

export function forkpointAvailable(): boolean {
  return INDEX.some((f) => existsSync(f));
}

async function api(): Promise<Api> {
  if (!forkpointAvailable()) throw new Error("src/index.ts does not exist yet");
  return (await import("../src/index.js")) as unknown as Api;
}

/** Run one figure; if the API for it is missing or throws, record "not available" instead of crashing. */
async function figure(notes: string[], label: string, fn: () => Promise<number>): Promise<number | null> {
  try {
    return await fn();
  } catch (e) {
    notes.push(`${label}: not available (${(e as Error).message.split("\n")[0]})`);
    return null;
  }
}

/** WAL-checkpoint the file through a second connection, then measure file + WAL. */
function sizeAfterWalCheckpoint(file: string): number {
  const db = new Database(file);
  try {
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
  return dbBytes(file);
}

export async function runForkpointChat(n: number, reps = 5, walWorker = false): Promise<ChatFigures> {
  const { openForkpoint } = await api();
  const fig = emptyChat(n);
  const { dir, cleanup } = tempDir("fp");
  const file = join(dir, "forkpoint.db");
  const fp = openForkpoint({ path: file, walWorker });
  try {
    const s = await fp.createSession({ userId: "user-1", title: "bench chat" });
    const cps: string[] = [];
    const mid = Math.floor(n / 2);
    let midMessage: Msg | undefined;
    const turnMs: number[] = [];
    const t0 = now();
    for (let i = 0; i < n; i++) {
      const ts = now();
      // A chat turn: the user's message and the reply, then a checkpoint, in one transaction (as the peer's one put).
      const t = await s.turn(
        [
          { role: "user", content: content(i, "user") },
          { role: "assistant", content: content(i, "assistant") },
        ],
        { name: "turn-" + i },
      );
      turnMs.push(now() - ts);
      cps.push(t.checkpoint.id);
      if (i === mid) midMessage = t.messages[0];
    }
    fig.totalMs = now() - t0;
    Object.assign(fig, firstLastMedians(turnMs));
    fig.turnsRssMB = peakRssMB();
    fig.dbBytes = sizeAfterWalCheckpoint(file);

    const latest = cps[cps.length - 1]!;
    fig.readLatestMs = await figure(fig.notes, "restore(latest)", () =>
      timeMedian(opReps(n, reps), async () => {
        const r = await s.restore(latest);
        if (r.history.length !== 2 * n) throw new Error(`restore returned ${r.history.length} messages, expected ${2 * n}`);
      }),
    );
    fig.historyMs = await figure(fig.notes, "history()", () =>
      timeMedian(opReps(n, reps), async () => {
        const h = await s.history();
        if (h.length !== 2 * n) throw new Error(`history returned ${h.length} messages, expected ${2 * n}`);
      }),
    );
    fig.list10Ms = await figure(
      fig.notes,
      "listCheckpoints(limit 10)",
      async () =>
        (
          await timeSmallOp(async () => {
            const p = await fp.listCheckpoints({ userId: "user-1", limit: 10 });
            if (p.items.length !== Math.min(10, n)) throw new Error(`listCheckpoints returned ${p.items.length} items`);
          })
        ).warmMs,
    );
    // Each followed at once by the floor's one write transaction, timed the same way in this process: the ratio the
    // target asks for, without the drift of the machine between this process and the floor's, minutes apart.
    const floorTx = floorWriteTx(dir);
    try {
      fig.rollbackMs = await figure(fig.notes, "rollback(middle)", async () => {
        // Two neighbouring checkpoints in turn: each call forks a branch (a second rollback to where the session
        // already is returns its branch unchanged, and would time a read).
        const t = await timeSmallOp((i) => s.rollback(cps[i % 2 === 0 ? mid : mid + 1]!));
        fig.rollbackColdMs = t.coldMs;
        fig.rollbackFloorMs = (await timeSmallOp(floorTx.tx)).warmMs;
        fig.rollbackVsFloor = t.warmMs / fig.rollbackFloorMs;
        return t.warmMs;
      });
      fig.editMs = await figure(fig.notes, "edit(middle message)", async () => {
        if (!midMessage?.id) throw new Error("append() returned no message ids");
        const id = midMessage.id;
        const t = await timeSmallOp(() => s.edit(id, { role: "user", content: content(-1, "user") }));
        fig.editColdMs = t.coldMs;
        fig.editFloorMs = (await timeSmallOp(floorTx.tx)).warmMs;
        fig.editVsFloor = t.warmMs / fig.editFloorMs;
        return t.warmMs;
      });
    } finally {
      floorTx.close();
    }
    return fig;
  } finally {
    await fp.close();
    cleanup();
  }
}

/** Reading a history of `count` messages through s.history() (appended 200 at a time). */
export async function runForkpointHistory(count: number, reps: number): Promise<{ count: number; ms: number }> {
  const { openForkpoint } = await api();
  const { dir, cleanup } = tempDir("fp-hist");
  const fp = openForkpoint({ path: join(dir, "forkpoint.db") });
  try {
    const s = await fp.createSession({ userId: "user-1", title: "bench history" });
    for (let p = 1; p <= count; p += 200) {
      const batch = [];
      for (let q = p; q < p + 200 && q <= count; q++) {
        const role = q % 2 ? "user" : "assistant";
        batch.push({ role, content: content(q >> 1, role) });
      }
      await s.append(batch);
    }
    await s.history(); // warm, like the floor
    const ms = await timeMedian(reps, async () => {
      const h = await s.history();
      if (h.length !== count) throw new Error(`history returned ${h.length} messages, expected ${count}`);
    });
    return { count, ms };
  } finally {
    await fp.close();
    cleanup();
  }
}

/** Many users: `total` checkpoints round-robin over `users` sessions; pages of 50 and the next page. */
export async function runForkpointPages(users: number, total: number, samples: number): Promise<PageFigures> {
  const { openForkpoint } = await api();
  const { dir, cleanup } = tempDir("fp-pages");
  const file = join(dir, "forkpoint.db");
  // The build is not a figure (the pages are): it runs with the opt-in WAL worker, which saves about a fifth of its
  // 2-3 minutes at a million checkpoints. The pages are then read through a default handle, opened after.
  const builder = openForkpoint({ path: file, walWorker: true });
  let fp: Fp | undefined;
  try {
    const t0 = now();
    const sessions: Session[] = [];
    for (let u = 0; u < users; u++) {
      const s = await builder.createSession({ userId: `user-${u}`, title: `session ${u}` });
      await s.append({ role: "user", content: content(u, "user") });
      sessions.push(s);
    }
    const perUser = Math.ceil(total / users);
    for (let k = 0; k < perUser; k++) for (const s of sessions) await s.checkpoint({ name: `cp-${k}` });
    const buildMs = now() - t0;
    await builder.close();
    const size = sizeAfterWalCheckpoint(file);
    fp = openForkpoint({ path: file });
    const rand = rng(42);
    const p1: number[] = [],
      p2: number[] = [];
    for (let i = 0; i < samples + 20; i++) {
      const userId = `user-${Math.floor(rand() * users)}`;
      let t = now();
      const first = await fp.listCheckpoints({ userId, limit: 50 });
      const a = now() - t;
      t = now();
      const second = await fp.listCheckpoints({ userId, limit: 50, cursor: first.nextCursor });
      const b = now() - t;
      if (first.items.length !== 50 || second.items.length !== Math.min(50, perUser - 50)) {
        throw new Error(`pages of ${first.items.length} and ${second.items.length} items`);
      }
      if (i >= 20) {
        p1.push(a);
        p2.push(b);
      }
    }
    return {
      users,
      checkpoints: users * perUser,
      buildMs,
      dbBytes: size,
      samples,
      page1: { medianMs: median(p1), p99Ms: percentile(p1, 99) },
      page2: { medianMs: median(p2), p99Ms: percentile(p2, 99) },
    };
  } finally {
    await builder.close();
    await fp?.close();
    cleanup();
  }
}

export interface ToolFigures {
  invocations: number;
  recordMsPerCall: number;
  rollbackMs: number;
  undone: number;
  msPerUndone: number;
}

/** Record `count` noop invocations after a checkpoint, then roll back over all of them. */
export async function runForkpointTools(count: number): Promise<ToolFigures> {
  const { openForkpoint, defineTool } = await api();
  if (typeof defineTool !== "function") throw new Error("defineTool is not exported");
  const { dir, cleanup } = tempDir("fp-tools");
  const noop = defineTool({ name: "noop", run: async (a: unknown) => a, undo: async () => {} });
  const fp = openForkpoint({ path: join(dir, "forkpoint.db"), tools: [noop] });
  try {
    const s = await fp.createSession({ userId: "user-1", title: "bench tools" });
    await s.append({ role: "user", content: content(0, "user") });
    const cp = await s.checkpoint({ name: "before tools" });
    let t = now();
    for (let i = 0; i < count; i++) await s.recordToolCall({ tool: "noop", args: { i }, result: { i } });
    const recordMs = now() - t;
    t = now();
    const r = await s.rollback(cp.id);
    const rollbackMs = now() - t;
    const undone = r.undone.length;
    return { invocations: count, recordMsPerCall: recordMs / count, rollbackMs, undone, msPerUndone: undone ? rollbackMs / undone : NaN };
  } finally {
    await fp.close();
    cleanup();
  }
}

export interface RequestFigures {
  /** Turns timed of each kind (after the warm-up). */
  turns: number;
  plainMs: number;
  requestMs: number;
  /** requestMs / plainMs. */
  ratio: number;
}

/**
 * The cost of a request id (issue 31): chat turns on one session, alternately without and with `{ requestId }`, so that
 * the machine's drift hits both alike; the median turn of each kind after a warm-up of `n / 4` turns.
 */
export async function runForkpointRequests(n: number): Promise<RequestFigures> {
  const { openForkpoint } = await api();
  const { dir, cleanup } = tempDir("fp-requests");
  const fp = openForkpoint({ path: join(dir, "forkpoint.db") });
  try {
    const s = await fp.createSession({ userId: "user-1", title: "bench requests" });
    return await alternatingRequests(n, async (i, asRequest) => {
      const messages = [
        { role: "user", content: content(i, "user") },
        { role: "assistant", content: content(i, "assistant") },
      ];
      if (asRequest) await s.turn(messages, { name: "turn-" + i }, { requestId: `turn-${i}-${s.id}` });
      else await s.turn(messages, { name: "turn-" + i });
    });
  } finally {
    await fp.close();
    cleanup();
  }
}
