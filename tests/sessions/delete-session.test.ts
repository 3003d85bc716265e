// fp.deleteSession: a session and everything it recorded go in one transaction; other sessions are untouched.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConflictError, NotFoundError, ValidationError } from "../../src/index.js";
import { tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { countRowsOf, dumpOf, onPostgres, sqlOn } from "../fixtures/backend.js";
import { DELETE_SESSION as POSTGRES_DELETE_SESSION } from "../../src/store/postgres/sessions.js";
import { DELETE_SESSION as SQLITE_DELETE_SESSION } from "../../src/store/sqlite/sessions.js";

const dbs = tempDatabases();

describe("deleteSession", () => {
  it("removes the session's branches, entries, tool calls, checkpoints, workspace and events, and nothing else", async () => {
    const dir = tempDir();
    const { fp, path: file } = dbs.open({ tools: [writeFileTool()] });
    const keep = await fp.createSession({ userId: "alice", title: "keep" });
    await keep.append({ role: "user", content: "stay" });
    await keep.checkpoint({ name: "k" });
    const before = await countRowsOf(file);

    const s = await fp.createSession({ userId: "alice", title: "Trip" });
    fs.writeFileSync(path.join(dir, "user.txt"), "mine");
    await s.attachWorkspace(dir);
    await s.append({ role: "user", content: "hi" });
    await s.setState({ step: 1 });
    await s.invoke("write_file", { path: path.join(dir, "a.txt"), text: "A" });
    const cp = await s.checkpoint({ name: "one" });
    await s.append({ role: "assistant", content: "later" });
    const rolled = await s.rollback(cp.id);
    expect(rolled.undone).toHaveLength(0);
    const [first] = await s.history();
    await s.edit(first!.id, { role: "user", content: "hello" });

    await fp.deleteSession(s.id, { userId: "alice" });
    await expect(fp.getSession(s.id, { userId: "alice" })).rejects.toBeInstanceOf(NotFoundError);
    const { items } = await fp.listSessions({ userId: "alice" });
    expect(items.map((i) => i.id)).toEqual([keep.id]);
    expect((await fp.listCheckpoints({ userId: "alice" })).items.map((c) => c.name)).toEqual(["k"]);
    // Shared stores (state documents, file contents) are prune's; every per-session table is back where it was.
    const after = await countRowsOf(file);
    for (const table of [
      "sessions",
      "branches",
      "entries",
      "checkpoints",
      "tool_results",
      "applied",
      "call_paths",
      "replay_results",
      "set_aside",
      "events",
      "moves",
      "move_steps",
      "workspaces",
      "checkpoint_files",
    ]) {
      expect([table, after[table]]).toEqual([table, before[table]]);
    }
    expect((await keep.history()).map((m) => m.content)).toEqual(["stay"]);
    expect(await fp.verify()).toMatchObject({ ok: true, problems: [] });
    const pruned = await fp.prune();
    expect(pruned.snapshots).toBeGreaterThan(0);
    expect(pruned.files).toBeGreaterThan(0);
    // The user's files are theirs: deleting the session does not touch the directory.
    expect(fs.readFileSync(path.join(dir, "user.txt"), "utf8")).toBe("mine");
  });

  it("is scoped to the owner, validates its input and leaves the database unchanged when refused", async () => {
    const { fp, path: file } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "hi" });
    const before = await dumpOf(file);
    expect(await rejectionOf(fp.deleteSession(s.id, { userId: "bob" }))).toBeInstanceOf(NotFoundError);
    expect(await rejectionOf(fp.deleteSession("ses_ZZZZZZZZZZZZZZZZ", { userId: "alice" }))).toBeInstanceOf(NotFoundError);
    expect(await rejectionOf(fp.deleteSession("", { userId: "alice" }))).toBeInstanceOf(ValidationError);
    expect(await rejectionOf(fp.deleteSession(s.id, {} as { userId: string }))).toBeInstanceOf(ValidationError);
    expect(await dumpOf(file)).toEqual(before);
  });

  it("refuses a session with a move still journaled (another process's, or a crashed one)", async () => {
    const { fp, path: file } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const cp = await s.checkpoint();
    await sqlOn(
      file,
      `INSERT INTO moves (id, session_id, kind, spec, status, pid, created_at) VALUES ('mv_x', $1, 'rollback', $2, 'running', 1, 0)`,
      [s.id, JSON.stringify({ newBranch: { forkCheckpointId: cp.id } })],
    );
    const error = await rejectionOf(fp.deleteSession(s.id, { userId: "alice" }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.code).toBe("MOVE_IN_PROGRESS");
    expect((await s.info()).id).toBe(s.id);
  });

  // The work of a delete follows the session's own rows, whatever the database holds beside it: each statement it runs
  // reads by index, and so does every foreign-key check a deleted row triggers (on SQLite an unindexed child key is a
  // scan of the whole child table per deleted parent row: 1,001 branches beside 40,000 checkpoints took seconds).
  it("costs what the session holds: its statements and every foreign-key check read by index (query plans)", async () => {
    const { fp, path: file } = dbs.open();
    const other = await fp.createSession({ userId: "bob" });
    for (let i = 0; i < 50; i++) await other.checkpoint({ name: `o${i}` });
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "hi" });
    const cp = await s.checkpoint({ name: "fork" });
    for (let i = 0; i < 5; i++) await s.rollback(cp.id);

    // Every foreign key's child columns lead some index (not a partial one) of the child table.
    expect(await unindexedForeignKeys(file)).toEqual([]);

    for (const statement of onPostgres ? POSTGRES_DELETE_SESSION : SQLITE_DELETE_SESSION) {
      const plan = onPostgres
        ? (await sqlOn<{ "QUERY PLAN": string }>(file, `SET enable_seqscan = off; EXPLAIN ${statement.replaceAll("$1", `'${s.id}'`)}`))
            .map((r) => r["QUERY PLAN"])
            .join("\n")
        : (await sqlOn<{ detail: string }>(file, `EXPLAIN QUERY PLAN ${statement}`, [s.id])).map((r) => r.detail).join("\n");
      // SQLite's plan lists the foreign-key checks too: a SCAN (of a table or a whole index) is a read of every row.
      expect(plan, statement).not.toMatch(onPostgres ? /Seq Scan/ : /\bSCAN\b/);
    }
    await fp.deleteSession(s.id, { userId: "alice" });
    expect((await fp.listCheckpoints({ userId: "bob" })).items).toHaveLength(20);
  });
});

/** Foreign keys (child table and columns) whose child columns lead no full index of the child table. */
async function unindexedForeignKeys(file: string): Promise<string[]> {
  if (onPostgres) {
    const rows = await sqlOn<{ key: string }>(
      file,
      `SELECT c.conrelid::regclass::text || '(' || c.conname || ')' AS key FROM pg_constraint c
      WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace AND NOT EXISTS (
        SELECT 1 FROM pg_index i WHERE i.indrelid = c.conrelid AND i.indpred IS NULL
          AND (i.indkey::int2[])[0:cardinality(c.conkey) - 1] @> c.conkey
          AND (i.indkey::int2[])[0:cardinality(c.conkey) - 1] <@ c.conkey)`,
    );
    return rows.map((r) => r.key);
  }
  const keys = await sqlOn<{ tbl: string; id: number; col: string }>(
    file,
    `SELECT m.name AS tbl, f.id AS id, f."from" AS col FROM sqlite_master m, pragma_foreign_key_list(m.name) f
    WHERE m.type = 'table' ORDER BY m.name, f.id, f.seq`,
  );
  const indexes = await sqlOn<{ tbl: string; idx: string; col: string }>(
    file,
    `SELECT m.name AS tbl, l.name AS idx, i.name AS col FROM sqlite_master m, pragma_index_list(m.name) l, pragma_index_info(l.name) i
    WHERE m.type = 'table' AND l.partial = 0 ORDER BY m.name, l.name, i.seqno`,
  );
  const group = <R extends { tbl: string }>(rows: R[], by: (r: R) => string) => {
    const out = new Map<string, { tbl: string; cols: string[] }>();
    for (const r of rows) {
      const key = `${r.tbl}/${by(r)}`;
      out.set(key, { tbl: r.tbl, cols: [...(out.get(key)?.cols ?? []), (r as unknown as { col: string }).col] });
    }
    return [...out.values()];
  };
  const led = group(indexes, (r) => r.idx);
  return group(keys, (r) => String(r.id))
    .filter((fk) => led.every((i) => i.tbl !== fk.tbl || [...i.cols.slice(0, fk.cols.length)].sort().join() !== [...fk.cols].sort().join()))
    .map((fk) => `${fk.tbl}(${fk.cols.join(", ")})`);
}
