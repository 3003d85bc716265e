// The CLI is safe to point at anything: reads never create a database, and stored text cannot drive the terminal. Run
// in the test process (./in-process.ts), with a spawned binary in each part.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { escapeText, inline } from "../../src/cli/output.js";
import { dumpDatabase } from "../helpers.js";
import { installCli, type Installed } from "./binary.js";
import { runInProcess } from "./in-process.js";

let cli: Installed;
beforeAll(async () => {
  cli = await installCli();
});
afterAll(() => cli.remove());

describe("reads never create a database", () => {
  const commands = [
    ["sessions", "-u", "ann"],
    ["sessions", "--all"],
    ["users"],
    ["summary", "s_x", "-u", "ann"],
    ["tree", "s_x", "-u", "ann"],
    ["history", "s_x", "-u", "ann"],
    ["checkpoints", "-u", "ann"],
    ["show", "cp_x", "-u", "ann"],
    ["diff", "s_x", "cp_a", "cp_b", "-u", "ann"],
    ["timeline", "s_x", "-u", "ann"],
    ["versions", "s_x", "m_x", "-u", "ann"],
    ["plan", "s_x", "-c", "cp_x", "-u", "ann"],
    ["rollback", "s_x", "cp_x", "-u", "ann", "--dry-run"],
    ["export", "s_x", "-u", "ann"],
    ["verify"],
    // Writes to a file that is not there fail the same way: only import and demo create one.
    ["rollback", "s_x", "cp_x", "-u", "ann"],
    ["switch", "s_x", "br_x", "-u", "ann"],
    ["edit", "s_x", "m_x", "hi", "-u", "ann"],
    ["undo", "s_x", "-u", "ann"],
    ["redo", "s_x", "-u", "ann"],
    ["delete", "s_x", "-u", "ann"],
    ["prune"],
    ["recover"],
  ];
  it.each(commands)("%s: one line on stderr, exit 1, and no file", async (...args) => {
    const db = join(cli.dir, `typo-${args[0]}.db`);
    const r = await runInProcess(["--db", db, ...args]);
    expect([r.status, r.stdout, r.stderr]).toEqual([
      1,
      "",
      `error NO_DATABASE: no database at ${db} (give --db or FORKPOINT_DB; only import and demo create one)\n`,
    ]);
    expect(existsSync(db)).toBe(false);
    expect(existsSync(`${db}-wal`)).toBe(false);
  });

  it("the installed binary too", () => {
    for (const args of [
      ["history", "s_x", "-u", "ann"],
      ["rollback", "s_x", "cp_x", "-u", "ann"],
    ]) {
      const db = join(cli.dir, `typo-spawned-${args[0]}.db`);
      const r = cli.run(["--db", db, ...args]);
      expect([r.status, r.stdout, r.stderr]).toEqual([
        1,
        "",
        `error NO_DATABASE: no database at ${db} (give --db or FORKPOINT_DB; only import and demo create one)\n`,
      ]);
      expect([existsSync(db), existsSync(`${db}-wal`)]).toEqual([false, false]);
    }
  });

  it("a read leaves an existing database byte for byte as it was", async () => {
    const db = join(cli.dir, "kept.db");
    const fp = openForkpoint({ path: db });
    const s = await fp.createSession({ userId: "ann" });
    await s.append({ role: "user", content: "hi" });
    await fp.close();
    const before = dumpDatabase(db);
    for (const args of [["sessions", "-u", "ann"], ["history", s.id, "-u", "ann"], ["verify"], ["users"]])
      expect((await runInProcess(["--db", db, ...args])).status).toBe(0);
    expect(dumpDatabase(db)).toEqual(before);
  });
});

describe("reads leave the files as they found them", () => {
  it("a database at rest keeps no -wal or -shm beside it, and its file is untouched", async () => {
    const dir = join(cli.dir, "at-rest");
    mkdirSync(dir);
    const db = join(dir, "rest.db");
    const fp = openForkpoint({ path: db });
    const s = await fp.createSession({ userId: "ann" });
    await s.append({ role: "user", content: "hi" });
    const cp = await s.checkpoint({ name: "one" });
    await fp.close(); // the last connection's close folds the WAL in and removes both files
    expect(readdirSync(dir)).toEqual(["rest.db"]);
    const bytes = readFileSync(db);
    const { mtimeMs } = statSync(db);
    for (const args of [
      ["sessions", "-u", "ann"],
      ["users"],
      ["history", s.id, "-u", "ann"],
      ["show", cp.id, "-u", "ann"],
      ["timeline", s.id, "-u", "ann"],
      ["export", s.id, "-u", "ann"],
      ["verify"],
      ["rollback", s.id, cp.id, "-u", "ann", "--dry-run"],
      ["history", "ses_nope", "-u", "ann"],
    ]) {
      await runInProcess(["--db", db, ...args]);
      expect([args[0], readdirSync(dir)]).toEqual([args[0], ["rest.db"]]);
    }
    // And a read by the installed binary, which ends its process.
    expect(cli.run(["--db", db, "history", s.id, "-u", "ann"]).status).toBe(0);
    expect(readdirSync(dir)).toEqual(["rest.db"]);
    expect(statSync(db).mtimeMs).toBe(mtimeMs);
    expect(readFileSync(db).equals(bytes)).toBe(true);
  });

  it("while another connection has the database open, a read leaves its -wal and -shm to it", async () => {
    const db = join(cli.dir, "busy.db");
    const fp = openForkpoint({ path: db });
    const s = await fp.createSession({ userId: "ann" });
    expect((await runInProcess(["--db", db, "history", s.id, "-u", "ann"])).status).toBe(0);
    expect([existsSync(`${db}-wal`), existsSync(`${db}-shm`)]).toEqual([true, true]);
    await s.append({ role: "user", content: "still writing" });
    expect(JSON.parse((await runInProcess(["--db", db, "--json", "history", s.id, "-u", "ann"])).stdout).items).toHaveLength(1);
    await fp.close();
  });
});

describe("stored text cannot drive the operator's terminal", () => {
  const hostile = "\x1b]0;pwned\x07 then \x1b[2J cleared\r\u009b31m \u061c\u202egnp.exe";
  let db = "";
  let sessionId = "";
  let checkpointId = "";
  beforeAll(async () => {
    db = join(cli.dir, "hostile.db");
    const fp = openForkpoint({ path: db });
    const s = await fp.createSession({ userId: "ann", title: `title ${hostile}` });
    await s.append([
      { role: "user", content: hostile },
      { role: `role\x1b[31m`, content: { text: hostile } },
    ]);
    await s.recordToolCall({ tool: "fetch", args: { url: hostile }, error: hostile });
    checkpointId = (await s.checkpoint({ name: `name ${hostile}` })).id;
    await s.append({ role: "user", content: `after ${hostile}` });
    sessionId = s.id;
    await fp.close();
  });

  it.each([
    ["sessions", "-u", "ann"],
    ["sessions", "--all"],
    ["history"],
    ["summary"],
    ["show"],
    ["timeline"],
    ["checkpoints", "-u", "ann"],
    ["diff"],
    ["versions"],
    ["tree"],
  ])("%s prints control characters as visible escapes", async (command, ...rest) => {
    const args = {
      history: ["history", sessionId, "-u", "ann"],
      summary: ["summary", sessionId, "-u", "ann"],
      show: ["show", checkpointId, "-u", "ann"],
      timeline: ["timeline", sessionId, "-u", "ann"],
      diff: ["diff", sessionId, checkpointId, checkpointId, "-u", "ann"],
      versions: ["versions", sessionId, "MSG", "-u", "ann"],
      tree: ["tree", sessionId, "-u", "ann"],
    }[command as "history"] ?? [command!, ...rest];
    if (command === "versions") {
      const history = JSON.parse((await runInProcess(["--db", db, "--json", "history", sessionId, "-u", "ann"])).stdout);
      args[2] = history.items[0].id;
    }
    const r = await runInProcess(["--db", db, ...args]);
    expect(r.status).toBe(0);
    // Nothing a terminal acts on: no C0 control but the newlines ending lines, no DEL, C1 or bidi override.
    expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u202a-\u202e\u2066-\u2069]/);
    if (["history", "show", "summary", "sessions"].includes(command!))
      expect(r.stdout).toContain("\\x1b]0;pwned\\x07 then \\x1b[2J cleared");
  });

  it("the installed binary prints them as the in-process runs do", async () => {
    const args = ["--db", db, "show", checkpointId, "-u", "ann"];
    const spawned = cli.run(args);
    expect([spawned.status, spawned.stdout, spawned.stderr]).toEqual([0, (await runInProcess(args)).stdout, ""]);
    expect(spawned.stdout).toContain("\\x1b]0;pwned\\x07 then \\x1b[2J cleared");
    expect(spawned.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
  });

  it("--json stays exact", async () => {
    const page = JSON.parse((await runInProcess(["--db", db, "--json", "history", sessionId, "-u", "ann"])).stdout);
    expect(page.items[0].content).toBe(hostile);
    expect(page.items[1]).toMatchObject({ role: "role\x1b[31m", content: { text: hostile } });
  });

  it("--json and export escape, as JSON allows, what a terminal would act on (C1, DEL, bidi); the values are the same", async () => {
    const actedOn = /[\u007f-\u009f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
    const printed = (await runInProcess(["--db", db, "--json", "history", sessionId, "-u", "ann"])).stdout;
    expect(printed).not.toMatch(actedOn);
    expect(printed).toContain("\\u202egnp.exe");
    expect(JSON.parse(printed).items[0].content).toBe(hostile);
    const exported = await runInProcess(["--db", db, "export", sessionId, "-u", "ann"]);
    expect([exported.status, exported.stdout]).toEqual([0, expect.not.stringMatching(actedOn)]);
    const copy = join(cli.dir, "hostile-copy.db");
    expect((await runInProcess(["--db", copy, "import", "-", "-u", "bo"], { input: exported.stdout })).status).toBe(0);
    expect(JSON.parse((await runInProcess(["--db", copy, "--json", "history", sessionId, "-u", "bo"])).stdout).items[0].content).toBe(
      hostile,
    );
  });

  it("a shortened value never splits a character: no lone surrogate", () => {
    const shortened = inline(`${"a".repeat(98)}😀😀😀`, 100);
    expect(Buffer.from(shortened).toString()).toBe(shortened); // UTF-8 would turn a lone surrogate into U+FFFD
    expect(shortened).toBe(`${"a".repeat(98)}…`);
    expect(inline("👨‍👩‍👧👨‍👩‍👧", 10)).toBe("👨‍👩‍👧…"); // a family is one character of 8 UTF-16 units
  });

  it("ids are escaped too: an imported document chooses its own", async () => {
    // Import keeps a document's ids (any text, hashed with the rest): written here straight into a copy's rows.
    const file = join(cli.dir, "hostile-ids.db");
    const fp = openForkpoint({ path: file });
    const s = await fp.createSession({ userId: "ann", title: "ids" });
    await s.append({ role: "user", content: "hi" });
    const cp = await s.checkpoint({ name: "one" });
    await s.recordToolCall({ tool: "fetch", args: {}, result: null });
    await fp.close();
    const raw = new Database(file);
    raw.pragma("foreign_keys = OFF");
    const branch = `br\x1b[2J\u202e`;
    const checkpoint = `cp\x1b]0;pwned\x07`;
    const was = (raw.prepare("SELECT current_branch_id AS id FROM sessions").get() as { id: string }).id;
    for (const [table, column] of [
      ["branches", "id"],
      ["entries", "branch_id"],
      ["sessions", "current_branch_id"],
      ["checkpoints", "branch_id"],
      ["events", "branch_id"],
    ]) {
      raw.prepare(`UPDATE ${table} SET ${column} = ? WHERE ${column} = ?`).run(branch, was);
    }
    raw.prepare("UPDATE checkpoints SET id = ? WHERE id = ?").run(checkpoint, cp.id);
    raw.prepare("UPDATE events SET ref_id = ? WHERE ref_id = ?").run(checkpoint, cp.id);
    raw.close();
    for (const args of [
      ["summary", s.id],
      ["tree", s.id],
      ["checkpoints"],
      ["timeline", s.id],
      ["history", s.id],
      ["plan", s.id, "-b", branch],
    ]) {
      const r = await runInProcess(["--db", file, ...args, "-u", "ann"]);
      expect([args[0], r.status]).toEqual([args[0], 0]);
      expect([args[0], r.stdout]).toEqual([args[0], expect.not.stringMatching(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/)]);
    }
  });

  it("usage errors quote the command line escaped too (an id pasted from anywhere)", async () => {
    for (const args of [["bo\x1b]0;pwned\x07gus"], ["--db", db, "sessions", "-u", "ann", "-n", "\x1b[2J"]]) {
      const r = await runInProcess(args);
      expect(r.status).toBe(2);
      expect(r.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
      expect(r.stderr).toMatch(/\\x1b/);
    }
    // Help printed on standard error (no command) keeps its lines.
    expect((await runInProcess([])).stderr).toMatch(/^Usage: forkpoint \[options\] \[command\]\n\n/);
  });

  it("escapeText names each character", () => {
    expect(escapeText("a\x1b[2Jb\x07\n\t\u009b\u202e\u2067\u061c\x7fé😀")).toBe("a\\x1b[2Jb\\x07\\n\\t\\x9b\\u202e\\u2067\\u061c\\x7fé😀");
  });
});
