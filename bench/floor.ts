// Floor: raw better-sqlite3 (WAL, synchronous=NORMAL) doing the same database work with no engine logic.
import Database from "better-sqlite3";
import { join } from "node:path";
import {
  alternatingRequests,
  content,
  dbBytes,
  emptyChat,
  median,
  opReps,
  peakRssMB,
  now,
  percentile,
  tempDir,
  timeMedian,
  timeSmallOp,
  timeSyncTurns,
  type ChatFigures,
} from "./util.js";

const SCHEMA = `
CREATE TABLE messages (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, branch_id TEXT NOT NULL,
  position INTEGER NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, created_at INTEGER NOT NULL);
CREATE UNIQUE INDEX messages_branch_pos ON messages(branch_id, position);
CREATE TABLE checkpoints (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, user_id TEXT NOT NULL,
  session_id TEXT NOT NULL, branch_id TEXT NOT NULL, position INTEGER NOT NULL, name TEXT, created_at INTEGER NOT NULL);
CREATE INDEX checkpoints_user_seq ON checkpoints(user_id, seq);
CREATE TABLE branches (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, parent_id TEXT, fork_position INTEGER, created_at INTEGER NOT NULL);
CREATE TABLE requests (session_id TEXT NOT NULL, request_id TEXT NOT NULL, fingerprint TEXT NOT NULL, answer TEXT NOT NULL,
  created_at INTEGER NOT NULL, PRIMARY KEY (session_id, request_id));
`;

function open(file: string): Database.Database {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(SCHEMA);
  return db;
}

/** A 21-character id, like nanoid's, so rows carry the same bytes as the engine's. */
let idCounter = 0;
function id(prefix: string): string {
  return (prefix + "_" + (idCounter++).toString(36).padStart(10, "0") + "xxxxxxxxxxxx").slice(0, 21);
}

function readHistory(db: Database.Database, branch: string, upTo = Number.MAX_SAFE_INTEGER) {
  const rows = db
    .prepare("SELECT id, position, role, content, created_at FROM messages WHERE branch_id = ? AND position <= ? ORDER BY position")
    .all(branch, upTo) as { id: string; position: number; role: string; content: string; created_at: number }[];
  return rows.map((r) => ({
    id: r.id,
    position: r.position,
    role: r.role,
    content: JSON.parse(r.content) as unknown,
    createdAt: r.created_at,
  }));
}

/** Chat: per turn one transaction appending two messages and inserting a checkpoint row (as forkpoint's `turn`). */
export async function runFloorChat(n: number, reps = 5): Promise<ChatFigures> {
  const fig = emptyChat(n);
  const { dir, cleanup } = tempDir("floor");
  const file = join(dir, "floor.db");
  const db = open(file);
  try {
    const branch = id("br"),
      session = id("se");
    db.prepare("INSERT INTO branches VALUES (?, ?, NULL, NULL, ?)").run(branch, session, Date.now());
    const insMsg = db.prepare("INSERT INTO messages (id, branch_id, position, role, content, created_at) VALUES (?, ?, ?, ?, ?, ?)");
    const insCp = db.prepare(
      "INSERT INTO checkpoints (id, user_id, session_id, branch_id, position, name, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
    const turn = db.transaction((pos: number, i: number) => {
      insMsg.run(id("ms"), branch, pos, "user", JSON.stringify(content(i, "user")), Date.now());
      insMsg.run(id("ms"), branch, pos + 1, "assistant", JSON.stringify(content(i, "assistant")), Date.now());
      insCp.run(id("cp"), "user-1", session, branch, pos + 1, `turn-${i}`, Date.now());
    });
    Object.assign(
      fig,
      timeSyncTurns(n, (i) => turn(2 * i + 1, i)),
    );
    fig.turnsRssMB = peakRssMB();
    db.pragma("wal_checkpoint(TRUNCATE)");
    fig.dbBytes = dbBytes(file);

    const latest = db.prepare("SELECT * FROM checkpoints WHERE user_id = ? ORDER BY seq DESC LIMIT 1");
    fig.readLatestMs = await timeMedian(opReps(n, reps), () => {
      const cp = latest.get("user-1") as { position: number };
      if (readHistory(db, branch, cp.position).length !== 2 * n) throw new Error("floor: bad history");
    });
    fig.historyMs = await timeMedian(opReps(n, reps), () => readHistory(db, branch));
    const list = db.prepare("SELECT * FROM checkpoints WHERE user_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?");
    fig.list10Ms = (await timeSmallOp(() => list.all("user-1", Number.MAX_SAFE_INTEGER, 10))).warmMs;

    // Rollback / edit floors: one write transaction each (a branch row; a branch row plus the new message).
    const insBranch = db.prepare("INSERT INTO branches VALUES (?, ?, ?, ?, ?)");
    const rollback = db.transaction(() => insBranch.run(id("br"), session, branch, n, Date.now()));
    const edit = db.transaction(() => {
      const b = id("br");
      insBranch.run(b, session, branch, n - 1, Date.now());
      insMsg.run(id("ms"), b, n, "user", JSON.stringify(content(-1, "user")), Date.now());
    });
    ({ warmMs: fig.rollbackMs, coldMs: fig.rollbackColdMs } = await timeSmallOp(() => rollback()));
    ({ warmMs: fig.editMs, coldMs: fig.editColdMs } = await timeSmallOp(() => edit()));
    fig.writeTxMs = (await timeSmallOp(() => rollback())).warmMs;
    return fig;
  } finally {
    db.close();
    cleanup();
  }
}

/**
 * The floor's one write transaction (a branch row, as its rollback writes) on a fresh floor database of its own in
 * `dir`: for timing it in another system's process, right after that system's operation.
 */
export function floorWriteTx(dir: string): { tx: () => void; close: () => void } {
  const db = open(join(dir, "floor-tx.db"));
  const session = id("se"),
    branch = id("br");
  const insBranch = db.prepare("INSERT INTO branches VALUES (?, ?, ?, ?, ?)");
  insBranch.run(branch, session, null, null, Date.now());
  const tx = db.transaction(() => insBranch.run(id("br"), session, branch, 1, Date.now()));
  return { tx: () => void tx(), close: () => db.close() };
}

/** Reading a history of `count` messages: one select ordered by position via the index, plus JSON.parse. */
export async function runFloorHistory(count: number, reps: number): Promise<{ count: number; ms: number }> {
  const { dir, cleanup } = tempDir("floor-hist");
  const db = open(join(dir, "floor.db"));
  try {
    const insMsg = db.prepare("INSERT INTO messages (id, branch_id, position, role, content, created_at) VALUES (?, ?, ?, ?, ?, ?)");
    db.transaction(() => {
      for (let p = 1; p <= count; p++) {
        const role = p % 2 ? "user" : "assistant";
        insMsg.run(id("ms"), "branch-1", p, role, JSON.stringify(content(p >> 1, role)), Date.now());
      }
    })();
    readHistory(db, "branch-1"); // warm the page cache like the engine's run does
    const ms = await timeMedian(reps, () => {
      if (readHistory(db, "branch-1").length !== count) throw new Error("floor: bad history");
    });
    return { count, ms };
  } finally {
    db.close();
    cleanup();
  }
}

export interface PageFigures {
  users: number;
  checkpoints: number;
  buildMs: number;
  dbBytes: number;
  page1: { medianMs: number; p99Ms: number };
  page2: { medianMs: number; p99Ms: number };
  samples: number;
}

/** A deterministic PRNG (mulberry32) so every system samples the same users. */
export function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Many users: `total` checkpoint rows round-robin over `users`; keyset pages of 50 for sampled users. */
export async function runFloorPages(users: number, total: number, samples: number): Promise<PageFigures> {
  const { dir, cleanup } = tempDir("floor-pages");
  const file = join(dir, "floor.db");
  const db = open(file);
  try {
    const ins = db.prepare(
      "INSERT INTO checkpoints (id, user_id, session_id, branch_id, position, name, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
    const t0 = now();
    const perUser = Math.ceil(total / users);
    const batch = db.transaction((k: number) => {
      for (let u = 0; u < users; u++) ins.run(id("cp"), `user-${u}`, `session-${u}`, `branch-${u}`, k + 1, `cp-${k}`, Date.now());
    });
    for (let k = 0; k < perUser; k++) batch(k);
    const buildMs = now() - t0;
    db.pragma("wal_checkpoint(TRUNCATE)");
    const size = dbBytes(file);
    const page = db.prepare("SELECT * FROM checkpoints WHERE user_id = ? AND seq < ? ORDER BY seq DESC LIMIT 50");
    const rand = rng(42);
    const p1: number[] = [],
      p2: number[] = [];
    for (let i = 0; i < samples + 20; i++) {
      const user = `user-${Math.floor(rand() * users)}`;
      let t = now();
      const first = page.all(user, Number.MAX_SAFE_INTEGER) as { seq: number }[];
      const a = now() - t;
      t = now();
      const second = page.all(user, first[first.length - 1]!.seq) as unknown[];
      const b = now() - t;
      if (first.length !== 50 || second.length !== Math.min(50, perUser - 50)) throw new Error("floor: bad page");
      if (i >= 20) {
        p1.push(a);
        p2.push(b);
      } // the first 20 warm up
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
    db.close();
    cleanup();
  }
}

/**
 * The floor of a request id (issue 31): the floor's turn alternately without and with one ledger row keyed by session
 * and request id (forkpoint's `requests` table), measured as forkpoint's is: what SQLite itself charges for the row.
 */
export async function runFloorRequests(n: number): Promise<{ turns: number; plainMs: number; requestMs: number; ratio: number }> {
  const { dir, cleanup } = tempDir("floor-requests");
  const db = open(join(dir, "floor.db"));
  try {
    const branch = id("br"),
      session = id("se");
    const insMsg = db.prepare("INSERT INTO messages (id, branch_id, position, role, content, created_at) VALUES (?, ?, ?, ?, ?, ?)");
    const insCp = db.prepare(
      "INSERT INTO checkpoints (id, user_id, session_id, branch_id, position, name, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
    const insRequest = db.prepare("INSERT INTO requests (session_id, request_id, fingerprint, answer, created_at) VALUES (?, ?, ?, ?, ?)");
    const turn = db.transaction((i: number, asRequest: boolean) => {
      insMsg.run(id("ms"), branch, 2 * i + 1, "user", JSON.stringify(content(i, "user")), Date.now());
      insMsg.run(id("ms"), branch, 2 * i + 2, "assistant", JSON.stringify(content(i, "assistant")), Date.now());
      const cp = id("cp");
      insCp.run(cp, "user-1", session, branch, 2 * i + 2, `turn-${i}`, Date.now());
      if (asRequest) insRequest.run(session, `turn-${i}-${session}`, "=turn", JSON.stringify([cp]), Date.now());
    });
    return await alternatingRequests(n, (i, asRequest) => turn(i, asRequest));
  } finally {
    db.close();
    cleanup();
  }
}
