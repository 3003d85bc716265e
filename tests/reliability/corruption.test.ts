// Corruption and environment (DESIGN §6.4 and the reliability issue): bytes flipped in stored rows make `restore`
// throw IntegrityError; a truncated or non-SQLite file fails at open with a DatabaseError; a read-only database
// reads but refuses writes with READ_ONLY; a database migrated by a newer version is refused, byte-for-byte unchanged.
// Rows are tampered with through SQL on either store; damaged files, read-only files and a newer SQLite schema are
// SQLite's (PostgreSQL's newer schema: tests/store/postgres/schema-drift.test.ts).
import Database from "better-sqlite3";
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildSync } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DatabaseError, IntegrityError, defineTool, type Forkpoint } from "../../src/index.js";
import { copyDatabase, dumpOf, onPostgres, openForkpoint, sqlOn } from "../fixtures/backend.js";
import { makeTempDir, rejectionOf, thrownBy, withRawDatabase } from "../helpers.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const USER = "erin";
const opened: Forkpoint[] = [];
afterAll(async () => {
  for (const fp of opened) await fp.close().catch(() => undefined);
});

const undone: string[] = [];
const note = defineTool<{ x: number }, { ok: boolean }>({
  name: "note",
  run: () => ({ ok: true }),
  undo: ({ args }) => void undone.push(String(args.x)),
});

function open(file: string, extra: { readonly?: boolean } = {}): Forkpoint {
  const fp = openForkpoint({ path: file, tools: [note], ...extra });
  opened.push(fp);
  return fp;
}

/** Removed after the test that made it (or, made in beforeAll, after the file) by tests/setup/temp-dirs.ts. */
function freshDir(): string {
  return makeTempDir("forkpoint-corrupt-");
}

const sha = (file: string) => createHash("sha256").update(fs.readFileSync(file)).digest("hex");

/** A real database with two branches, messages, state, a recorded tool call and three checkpoints. */
interface Base {
  file: string;
  sessionId: string;
  rootBranch: string;
  branch2: string;
  msgs: Record<"m1" | "m2" | "m3" | "m4", string>;
  tool: string;
  cp: Record<"A" | "B" | "C", string>;
}
let base: Base;

beforeAll(async () => {
  const file = path.join(freshDir(), "base.db");
  const fp = openForkpoint({ path: file, tools: [note] });
  const s = await fp.createSession({ userId: USER, title: "to be damaged" });
  const rootBranch = (await s.info()).currentBranchId;
  const [m1, m2] = await s.append([
    { role: "user", content: "hello there" },
    { role: "assistant", content: { parts: [{ type: "text", text: "general kenobi" }] }, metadata: { model: "m" } },
  ]);
  await s.setState({ step: "one", n: 1 });
  const tool = await s.recordToolCall({ tool: "note", args: { x: 1 }, result: { ok: true } });
  const cpA = await s.checkpoint({ name: "alpha", metadata: { k: "v" } });
  const [m3] = await s.append({ role: "user", content: "more words" });
  await s.setState({ step: "two", n: 2 });
  const cpB = await s.checkpoint({ name: "bravo" });
  const { branch } = await s.rollback(cpA.id);
  const [m4] = await s.append({ role: "user", content: "another way" });
  const cpC = await s.checkpoint({ name: "charlie" });
  await fp.close();
  if (!onPostgres) expect(fs.existsSync(`${file}-wal`)).toBe(false);
  base = {
    file,
    sessionId: s.id,
    rootBranch,
    branch2: branch.id,
    msgs: { m1: m1!.id, m2: m2!.id, m3: m3!.id, m4: m4!.id },
    tool: tool.id,
    cp: { A: cpA.id, B: cpB.id, C: cpC.id },
  };
});

/** A copy of the base database in a fresh directory. */
async function copyOfBase(): Promise<string> {
  const file = path.join(freshDir(), "copy.db");
  await copyDatabase(base.file, file);
  return file;
}

/** `text` with one character's low bit flipped (at the first letter or digit at or after `from`). */
function flip(text: string, from = 0): string {
  let i = from;
  while (i < text.length && !/[A-Za-z0-9]/.test(text[i]!)) i++;
  if (i >= text.length) throw new Error(`nothing to flip in ${text}`);
  return text.slice(0, i) + String.fromCharCode(text.charCodeAt(i) ^ 1) + text.slice(i + 1);
}

/** SQL on the database being damaged (either store). */
type Sql = (text: string, ...values: unknown[]) => Promise<Record<string, any>[]>;
/** A copy of `bytes` with the first byte's low bit flipped. */
const flipByte = (bytes: Buffer) => Buffer.concat([Buffer.from([bytes[0]! ^ 1]), bytes.subarray(1)]);
type Tamper = (db: Sql, b: Base) => Promise<void>;
const get = async (db: Sql, sql: string, ...params: unknown[]) => (await db(sql, ...params))[0]!;
/** Runs `tamper` on the database at `file`. */
const damage = (file: string, tamper: Tamper) => tamper((text, ...values) => sqlOn(file, text, values), base);
function flipColumn(table: string, column: string, key: string, id: (b: Base) => string | number, from = 0): Tamper {
  return async (db, b) => {
    const row = await get(db, `SELECT ${column} AS v FROM ${table} WHERE ${key} = $1`, id(b));
    const value = typeof row.v === "number" ? row.v + 1 : Buffer.isBuffer(row.v) ? flipByte(row.v) : flip(String(row.v), from);
    const changed = await db(`UPDATE ${table} SET ${column} = $1 WHERE ${key} = $2 RETURNING 1`, value, id(b));
    expect(changed).toHaveLength(1);
  };
}
const stateIdOf = async (db: Sql, b: Base, n: number) =>
  (await get(db, `SELECT id FROM state_snapshots WHERE body = $1`, JSON.stringify({ n, step: n === 1 ? "one" : "two" }))).id as number;

/** Each case: a tampering, the checkpoints it must break, and those it must leave restorable. */
const CASES: { name: string; tamper: Tamper; broken: ("A" | "B" | "C")[]; intact: ("A" | "B" | "C")[] }[] = [
  {
    name: "entries.content of a message (a letter flipped)",
    tamper: flipColumn("entries", "content", "id", (b) => b.msgs.m1),
    broken: ["A", "B", "C"],
    intact: [],
  },
  {
    name: "entries.content of a message (made invalid JSON)",
    tamper: async (db, b) => void (await db(`UPDATE entries SET content = '#' || substr(content, 2) WHERE id = $1`, b.msgs.m2)),
    broken: ["A", "B", "C"],
    intact: [],
  },
  { name: "entries.role", tamper: flipColumn("entries", "role", "id", (b) => b.msgs.m2), broken: ["A", "B", "C"], intact: [] },
  { name: "entries.hash", tamper: flipColumn("entries", "hash", "id", (b) => b.msgs.m1), broken: ["A", "B", "C"], intact: [] },
  { name: "entries.metadata", tamper: flipColumn("entries", "metadata", "id", (b) => b.msgs.m2), broken: ["A", "B", "C"], intact: [] },
  { name: "entries.created_at", tamper: flipColumn("entries", "created_at", "id", (b) => b.msgs.m1), broken: ["A", "B", "C"], intact: [] },
  {
    name: "entries.content of a tool call (its args)",
    tamper: flipColumn("entries", "content", "id", (b) => b.tool, 2),
    broken: ["A", "B", "C"],
    intact: [],
  },
  {
    name: "entries.state_id (pointed at another snapshot)",
    tamper: async (db, b) =>
      void (await db(
        `UPDATE entries SET state_id = $1 WHERE state_id = $2 AND kind = 'state'`,
        await stateIdOf(db, b, 2),
        await stateIdOf(db, b, 1),
      )),
    broken: ["A", "C"],
    intact: [],
  },
  {
    name: "a message after checkpoint A on the root (m3)",
    tamper: flipColumn("entries", "content", "id", (b) => b.msgs.m3),
    broken: ["B"],
    intact: ["A", "C"],
  },
  {
    name: "a message of the second branch (m4)",
    tamper: flipColumn("entries", "content", "id", (b) => b.msgs.m4),
    broken: ["C"],
    intact: ["A", "B"],
  },
  {
    name: "tool_results.result",
    tamper: flipColumn("tool_results", "result", "entry_id", (b) => b.tool, 2),
    broken: ["A", "B", "C"],
    intact: [],
  },
  {
    name: "tool_results.status",
    tamper: async (db, b) => void (await db(`UPDATE tool_results SET status = 'failed' WHERE entry_id = $1`, b.tool)),
    broken: ["A", "B", "C"],
    intact: [],
  },
  {
    name: "tool_results.completed_at",
    tamper: flipColumn("tool_results", "completed_at", "entry_id", (b) => b.tool),
    broken: ["A", "B", "C"],
    intact: [],
  },
  {
    name: "state_snapshots.body",
    tamper: async (db, b) =>
      void (await db(`UPDATE state_snapshots SET body = replace(body, '"one"', '"onf"') WHERE id = $1`, await stateIdOf(db, b, 1))),
    broken: ["A", "C"],
    intact: [],
  },
  {
    name: "state_snapshots.hash",
    tamper: async (db, b) =>
      void (await db(`UPDATE state_snapshots SET hash = '0' || substr(hash, 2) WHERE id = $1`, await stateIdOf(db, b, 2))),
    broken: ["B"],
    intact: ["A", "C"],
  },
  ...(["name", "metadata", "position", "head_hash", "checksum", "created_at", "user_id"] as const).map((column) => ({
    name: `checkpoints.${column}`,
    tamper: flipColumn("checkpoints", column, "id", (b) => b.cp.A),
    broken: ["A" as const],
    intact: ["B" as const, "C" as const],
  })),
  {
    name: "checkpoints.state_id",
    tamper: async (db, b) => void (await db(`UPDATE checkpoints SET state_id = $1 WHERE id = $2`, await stateIdOf(db, b, 2), b.cp.A)),
    broken: ["A"],
    intact: ["B", "C"],
  },
  {
    name: "checkpoints.branch_id (moved to the other branch)",
    tamper: async (db, b) => void (await db(`UPDATE checkpoints SET branch_id = $1 WHERE id = $2`, b.branch2, b.cp.A)),
    broken: ["A"],
    intact: ["B", "C"],
  },
  {
    name: "checkpoints.expires_at (set)",
    tamper: async (db, b) => void (await db(`UPDATE checkpoints SET expires_at = 9e15 WHERE id = $1`, b.cp.B)),
    broken: ["B"],
    intact: ["A", "C"],
  },
];

describe("bytes flipped in stored rows", () => {
  it("an untouched copy restores every checkpoint (the control)", async () => {
    const fp = open(await copyOfBase());
    const s = await fp.getSession(base.sessionId, { userId: USER });
    for (const id of Object.values(base.cp)) await s.restore(id);
    expect((await s.restore(base.cp.A)).state).toEqual({ step: "one", n: 1 });
  });

  for (const c of CASES) {
    it(`${c.name}: restore throws IntegrityError for ${c.broken.join(", ")}`, async () => {
      const file = await copyOfBase();
      await damage(file, c.tamper);
      const fp = open(file);
      const s = await fp.getSession(base.sessionId, { userId: USER });
      for (const k of c.broken) {
        const e = await rejectionOf(s.restore(base.cp[k]));
        expect(e, `checkpoint ${k}: ${e?.message}`).toBeInstanceOf(IntegrityError);
        expect(e.code).toBe("INTEGRITY_ERROR");
        expect(e.message.length).toBeGreaterThan(10);
      }
      for (const k of c.intact) await s.restore(base.cp[k]);
    });
  }
});

// DESIGN §6.4: "a mismatch is an error, never silent data". A rollback to a checkpoint materializes the
// checkpoint (the new branch starts with its history and state), and diff reads two checkpoints' contents:
// a damaged checkpoint must not silently become the base of a new branch or of a comparison.
// diff reads both lineages in full and verifies them like restore. rollback stays O(1) in the history
// length, so it verifies the checkpoint's own checksum, its state and the entry it points at, not the
// whole chain: damage deep in the history is caught by restore, diff and every read that verifies.
describe("a damaged checkpoint is refused by rollback (its own checksum and anchor) and by diff (in full)", () => {
  for (const c of CASES.filter((x) => x.name.startsWith("checkpoints.") && x.broken.includes("A"))) {
    it(`${c.name}: rollback and diff throw IntegrityError, and the refused rollback changes nothing`, async () => {
      const file = await copyOfBase();
      await damage(file, c.tamper);
      const fp = open(file);
      const s = await fp.getSession(base.sessionId, { userId: USER });
      const outcome = async (call: () => Promise<unknown>) => {
        try {
          await call();
          return "resolved";
        } catch (error) {
          return (error as Error).name;
        }
      };
      const before = await dumpOf(file);
      const rollback = await outcome(() => s.rollback(base.cp.A));
      const rolledBack = await dumpOf(file);
      const diff = await outcome(() => s.diff(base.cp.A, base.cp.B));
      expect({ rollback, diff }).toEqual({ rollback: "IntegrityError", diff: "IntegrityError" });
      expect(rolledBack).toEqual(before);
    });
  }

  it(`${CASES[0]!.name}: diff throws IntegrityError`, async () => {
    const file = await copyOfBase();
    await damage(file, CASES[0]!.tamper);
    const s = await open(file).getSession(base.sessionId, { userId: USER });
    await expect(s.diff(base.cp.A, base.cp.B)).rejects.toBeInstanceOf(IntegrityError);
  });
});

function expectClearOpenError(e: unknown, file: string): void {
  expect(e).toBeInstanceOf(DatabaseError);
  expect((e as Error).name).toBe("DatabaseError");
  expect(e).not.toBeInstanceOf(Database.SqliteError);
  expect(["NOT_A_DATABASE", "CORRUPT"]).toContain((e as DatabaseError).code);
  expect((e as Error).message).toContain(file);
}

describe.skipIf(onPostgres)("damaged files fail at open with a DatabaseError", () => {
  it("a real database truncated to half its size", () => {
    const file = path.join(freshDir(), "copy.db");
    fs.copyFileSync(base.file, file);
    // make it big enough that half of it is missing real pages
    withRawDatabase(file, (db) =>
      db.exec(
        `CREATE TABLE IF NOT EXISTS padding (x); INSERT INTO padding SELECT randomblob(1000) FROM (SELECT 1 UNION ALL SELECT 2) , (SELECT value FROM json_each('[${Array(60).fill(0).join(",")}]'));`,
      ),
    );
    withRawDatabase(file, (db) => db.pragma("wal_checkpoint(TRUNCATE)"));
    const size = fs.statSync(file).size;
    expect(size).toBeGreaterThan(64 * 1024);
    fs.truncateSync(file, Math.floor(size / 2));
    const before = sha(file);
    expectClearOpenError(
      thrownBy(() => openForkpoint({ path: file })),
      file,
    );
    expectClearOpenError(
      thrownBy(() => openForkpoint({ path: file, readonly: true })),
      file,
    );
    expect(sha(file)).toBe(before);
  });

  it("a file of random bytes", () => {
    const file = path.join(freshDir(), "random.db");
    fs.writeFileSync(file, randomBytes(64 * 1024));
    const before = sha(file);
    const e = thrownBy(() => openForkpoint({ path: file }));
    expectClearOpenError(e, file);
    expect((e as DatabaseError).code).toBe("NOT_A_DATABASE");
    expectClearOpenError(
      thrownBy(() => openForkpoint({ path: file, readonly: true })),
      file,
    );
    expect(sha(file)).toBe(before);
  });
});

describe("a read-only database (either store)", () => {
  it("with `readonly: true`: reads work, every write is refused with READ_ONLY, nothing changes", async () => {
    const file = await copyOfBase();
    const before = await dumpOf(file);
    const fp = open(file, { readonly: true });
    const s = await fp.getSession(base.sessionId, { userId: USER });
    expect((await s.history()).map((m) => m.id)).toEqual([base.msgs.m1, base.msgs.m2, base.msgs.m4]);
    expect(await s.getState()).toEqual({ step: "one", n: 1 });
    expect((await s.restore(base.cp.B)).history).toHaveLength(3);
    expect(await s.branches()).toHaveLength(2);
    expect((await fp.listSessions({ userId: USER })).items).toHaveLength(1);
    expect((await fp.listCheckpoints({ userId: USER })).items).toHaveLength(3);
    expect(await s.toolTrack()).toHaveLength(1);
    await s.plan({ checkpointId: base.cp.B });

    const writes: [string, () => Promise<unknown>][] = [
      ["createSession", () => fp.createSession({ userId: USER })],
      ["append", () => s.append({ role: "user", content: "no" })],
      ["setState", () => s.setState({ no: true })],
      ["setState(updater)", () => s.setState(() => ({ no: true }))],
      ["checkpoint", () => s.checkpoint({ name: "no" })],
      ["invoke", () => s.invoke("note", { x: 2 })],
      ["recordToolCall", () => s.recordToolCall({ tool: "note", args: { x: 3 }, result: { ok: true } })],
      ["rollback", () => s.rollback(base.cp.B)],
      ["switchBranch", () => s.switchBranch(base.rootBranch)],
      ["edit", () => s.edit(base.msgs.m1, { role: "user", content: "edited" })],
      ["deleteCheckpoint", () => s.deleteCheckpoint(base.cp.B)],
    ];
    for (const [name, write] of writes) {
      const e = await rejectionOf(write);
      expect(e, name).toBeInstanceOf(DatabaseError);
      expect(e.code, name).toBe("READ_ONLY");
      expect(e.message, name).toMatch(/read-only/);
    }
    expect(undone).toEqual([]);
    await fp.close();
    expect(await dumpOf(file)).toEqual(before);
  });

  it("with `readonly: true`: a call that would write nothing answers as on a writable database, alike on every store", async () => {
    const file = await copyOfBase();
    const before = await dumpOf(file);
    const fp = open(file, { readonly: true });
    const s = await fp.getSession(base.sessionId, { userId: USER });
    const current = (await s.info()).currentBranchId;
    expect((await s.switchBranch(current)).branch.id).toBe(current);
    expect(await rejectionOf(s.redo())).toMatchObject({ name: "ConflictError", code: "NOTHING_TO_REDO" });
    expect(await rejectionOf(fp.deleteSession("ses_not_there", { userId: USER }))).toMatchObject({ code: "NOT_FOUND" });
    await fp.close();
    expect(await dumpOf(file)).toEqual(before);
  });
});

describe.skipIf(onPostgres)("a read-only database", () => {
  it("with file mode 0444 (opened normally, by a user who cannot write it): reads work, writes are READ_ONLY", (ctx) => {
    const dir = freshDir();
    const file = path.join(dir, "locked.db");
    fs.copyFileSync(base.file, file);
    fs.chmodSync(file, 0o444);
    fs.chmodSync(dir, 0o777); // SQLite may create the -wal/-shm files beside it
    const before = sha(file);
    // root ignores file modes: run the probe as an unprivileged user then, on forkpoint bundled into a directory that
    // user can read (the checkout may sit where only its owner can: a `mktemp -d` or /root).
    const asRoot = process.getuid?.() === 0;
    const forkpoint = asRoot ? bundleForOtherUsers(freshDir()) : path.join(ROOT, "src/index.ts");
    if (asRoot) {
      // Only what no copy can help: that user cannot run this Node.js, or reach the temp dir (TMPDIR).
      const reach = spawnSync(process.execPath, ["-e", "require('node:fs').accessSync(process.argv[1])", forkpoint], {
        uid: NOBODY,
        gid: NOBODY,
        encoding: "utf8",
      });
      if (reach.status !== 0 || reach.error) {
        ctx.skip(`user ${NOBODY} cannot run ${process.execPath} or read ${forkpoint}: ${reach.error?.message ?? reach.stderr}`);
      }
    }
    const probe = `
      const { openForkpoint } = await import(${JSON.stringify(pathToFileURL(forkpoint).href)});
      const [file, sessionId, userId, cp] = ${JSON.stringify([file, base.sessionId, USER, base.cp.B])};
      const out = { writes: {} };
      const fp = openForkpoint({ path: file });
      const s = await fp.getSession(sessionId, { userId });
      out.history = (await s.history()).length;
      out.state = await s.getState();
      out.restored = (await s.restore(cp)).history.length;
      const writes = {
        append: () => s.append({ role: "user", content: "no" }),
        setState: () => s.setState({ no: true }),
        checkpoint: () => s.checkpoint(),
        createSession: () => fp.createSession({ userId }),
        recordToolCall: () => s.recordToolCall({ tool: "note", args: {}, result: null }),
      };
      for (const [name, write] of Object.entries(writes)) {
        try { await write(); out.writes[name] = "written"; }
        catch (e) { out.writes[name] = { name: e.name, code: e.code, message: e.message }; }
      }
      await fp.close();
      console.log(JSON.stringify(out));
    `;
    const r = spawnSync(process.execPath, [...(asRoot ? [] : ["--import", "tsx"]), "--input-type=module", "-e", probe], {
      cwd: asRoot ? path.dirname(forkpoint) : ROOT,
      encoding: "utf8",
      ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
    });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split("\n").pop()!) as {
      history: number;
      state: unknown;
      restored: number;
      writes: Record<string, { name: string; code: string; message: string } | "written">;
    };
    expect(out.history).toBe(3);
    expect(out.state).toEqual({ step: "one", n: 1 });
    expect(out.restored).toBe(3);
    for (const [name, result] of Object.entries(out.writes)) {
      expect(result, name).toMatchObject({ name: "DatabaseError", code: "READ_ONLY" });
      expect((result as { message: string }).message, name).toMatch(/read-only/);
    }
    expect(Object.keys(out.writes)).toHaveLength(5);
    expect(sha(file)).toBe(before);
  });
});

describe.skipIf(onPostgres)("a database written by a newer schema version", () => {
  it("is refused with SCHEMA_TOO_NEW (read-write and read-only) and left byte-for-byte unchanged", async () => {
    const file = await copyOfBase();
    withRawDatabase(file, (db) => {
      const last = (db.prepare(`SELECT max(created_at) AS at FROM __drizzle_migrations`).get() as { at: number }).at;
      db.prepare(`INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('from-the-future', ?)`).run(Number(last) + 86_400_000);
      db.exec(`CREATE TABLE future_things (id INTEGER PRIMARY KEY, x TEXT)`);
      db.pragma("wal_checkpoint(TRUNCATE)");
    });
    const before = sha(file);
    const dumped = await dumpOf(file);
    for (const readonly of [false, true]) {
      const e = thrownBy(() => openForkpoint({ path: file, readonly }));
      expect(e).toBeInstanceOf(DatabaseError);
      expect(e.code).toBe("SCHEMA_TOO_NEW");
      expect(e.message).toMatch(/newer/);
      expect(sha(file)).toBe(before);
    }
    expect(await dumpOf(file)).toEqual(dumped);
    expect(sha(file)).toBe(before);
  });
});

/** The unprivileged user (and group) the read-only probe runs as when the tests run as root. */
const NOBODY = 65534;

/**
 * forkpoint's public API bundled into `dir` (made readable by everyone), with the one native package it loads
 * (better-sqlite3) copied beside it: a child running as another user needs nothing of the checkout, which that user
 * may not be allowed to read. Returns the bundle's path.
 */
function bundleForOtherUsers(dir: string): string {
  const out = path.join(dir, "forkpoint.mjs");
  buildSync({
    stdin: { contents: `export * from ${JSON.stringify(path.join(ROOT, "src/index.ts"))};`, resolveDir: ROOT, loader: "ts" },
    bundle: true,
    platform: "node",
    format: "esm",
    outfile: out,
    external: ["better-sqlite3", "pg-native"],
    // The bundled CommonJS packages require() their externals: an ES module has no require of its own.
    banner: { js: `import { createRequire as requireFrom } from "node:module"; const require = requireFrom(import.meta.url);` },
    logLevel: "error",
  });
  const from = path.join(ROOT, "node_modules", "better-sqlite3");
  const to = path.join(dir, "node_modules", "better-sqlite3");
  for (const part of ["package.json", "lib", "prebuilds", "build"]) {
    if (fs.existsSync(path.join(from, part))) fs.cpSync(path.join(from, part), path.join(to, part), { recursive: true });
  }
  for (let d = to; d.startsWith(dir); d = path.dirname(d)) fs.chmodSync(d, 0o755);
  return out;
}
