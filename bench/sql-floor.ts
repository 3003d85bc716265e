// forkpoint's SQL alone: its own schema (made by openForkpoint), and per chat turn the statements its `turn` runs in
// one transaction, through raw better-sqlite3 with no engine JavaScript: no validation, no hashing (random hashes of
// the same size), no row objects. What the engine costs above this is its JavaScript; what this costs above the floor
// is the schema (more B-trees, wider rows, foreign keys) and the lookup where every write starts.
import Database from "better-sqlite3";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { openForkpoint } from "../src/index.js";
import { content, dbBytes, emptyChat, peakRssMB, tempDir, timeSyncTurns, type ChatFigures } from "./util.js";

// The same statements as SqliteStore's currentOf, insertEntry and insertCheckpoint (src/store/sqlite-store.ts).
const CURRENT = `SELECT s.seq, s.id, s.user_id, s.title, s.metadata, s.current_branch_id, s.origin_session_id, s.origin_checkpoint_id,
    s.has_tools, s.created_at, s.updated_at,
    b.session_id, b.parent_id, b.fork_checkpoint_id, b.fork_position, b.fork_entry_id, b.name, b.reason, b.created_at,
    e.id, e.position, lower(hex(e.hash)), e.state_id, e.msg_count, s.has_workspace
  FROM sessions s JOIN branches b ON b.id = s.current_branch_id
  LEFT JOIN entries e ON e.branch_id = b.id AND e.position = (SELECT max(position) FROM entries WHERE branch_id = b.id)
  WHERE s.id = ?`;
const INSERT_ENTRY = `INSERT INTO entries (id, branch_id, position, kind, role, content, tool, call_id, client_id, metadata, state_id, msg_count, hash, created_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, unhex(?), ?)`;
const INSERT_CHECKPOINT = `INSERT INTO checkpoints (seq, id, session_id, branch_id, position, name, auto, metadata, user_id, state_id, head_hash, checksum, created_at, expires_at)
  VALUES (max(CAST(round(? * 1000) AS INTEGER), coalesce((SELECT max(seq) FROM checkpoints), 0) + 1), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
/** Where the head entry's position is in a CURRENT row. */
const HEAD_POSITION = 20;

/** Time-ordered ids of the engine's length ("msg_" + 22), from a counter: no randomness to pay for in the loop. */
let counter = 0;
function id(kind: string): string {
  return `${kind}_${Date.now().toString(36).padStart(9, "0")}${(counter++).toString(36).padStart(3, "0")}${"0123456789"}`;
}

/** A pool of hex SHA-256-sized strings drawn before the loop, so no hashing happens inside it. */
const HEX = Array.from({ length: 1024 }, () => randomBytes(32).toString("hex"));
const hex = (i: number) => HEX[i % HEX.length]!;

export async function runSqlFloorChat(n: number): Promise<ChatFigures> {
  const fig = emptyChat(n);
  const { dir, cleanup } = tempDir("sql");
  const file = join(dir, "forkpoint.db");
  try {
    // The schema and the session come from the engine (its migrations), outside the timed loop.
    const fp = openForkpoint({ path: file });
    const session = await fp.createSession({ userId: "user-1", title: "bench chat" });
    await fp.close();

    // The engine's pragmas (src/store/open-database.ts).
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    try {
      const current = db.prepare(CURRENT).raw();
      const insertEntry = db.prepare(INSERT_ENTRY);
      const insertCheckpoint = db.prepare(INSERT_CHECKPOINT);
      const branchId = db.prepare("SELECT current_branch_id FROM sessions WHERE id = ?").pluck().get(session.id) as string;
      const turn = db.transaction((i: number) => {
        const row = current.get(session.id) as unknown[];
        const pos = (row[HEAD_POSITION] as number | null) ?? 0;
        const t = Date.now();
        insertEntry.run(
          id("msg"),
          branchId,
          pos + 1,
          "message",
          "user",
          JSON.stringify(content(i, "user")),
          null,
          null,
          null,
          null,
          null,
          pos + 1,
          hex(3 * i),
          t,
        );
        insertEntry.run(
          id("msg"),
          branchId,
          pos + 2,
          "message",
          "assistant",
          JSON.stringify(content(i, "assistant")),
          null,
          null,
          null,
          null,
          null,
          pos + 2,
          hex(3 * i + 1),
          t,
        );
        insertCheckpoint.run(
          t,
          id("cp"),
          session.id,
          branchId,
          pos + 2,
          `turn-${i}`,
          0,
          null,
          "user-1",
          null,
          hex(3 * i + 2),
          hex(3 * i),
          t,
          null,
        );
      });
      Object.assign(fig, timeSyncTurns(n, turn));
      fig.turnsRssMB = peakRssMB();
      db.pragma("wal_checkpoint(TRUNCATE)");
      fig.dbBytes = dbBytes(file);
    } finally {
      db.close();
    }

    // The rows are the engine's own shape: it reads them back as the session's history (hashes aside).
    const check = openForkpoint({ path: file });
    try {
      const count = (await (await check.getSession(session.id, { userId: "user-1" })).history()).length;
      if (count !== 2 * n) throw new Error(`sql floor: forkpoint read ${count} messages back, expected ${2 * n}`);
    } finally {
      await check.close();
    }
    return fig;
  } finally {
    cleanup();
  }
}
