// How a workspace is read: through its stat cache (a file is read again only when its stat data changed, also after
// reopening the database), a watcher that names what changed (every kind of change reaches the snapshot; a burst too
// large to trust is walked), racy files read again, and the directory's own .gitignore files.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Forkpoint, SessionHandle } from "../../src/index.js";
import { engineOf } from "../../src/sessions/forkpoint.js";
import { workspaceStateFor } from "../../src/sessions/workspace/state.js";
import { filesUnder, makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let dbFile: string;
let fp: Forkpoint;

const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws, rel), text);
};
/** Every file under the workspace, with its text. */
const tree = () => filesUnder(ws, dbFile);
const stateOf = (s: SessionHandle) => workspaceStateFor(engineOf(fp).ctx, s.id)!;
/** Files read and whole walks made by the session's workspace scans since the last call. */
function counter(s: SessionHandle) {
  let reads = stateOf(s).cache.reads;
  let walks = stateOf(s).walks;
  return () => {
    const state = stateOf(s);
    const out = { reads: state.cache.reads - reads, walks: state.walks - walks };
    reads = state.cache.reads;
    walks = state.walks;
    return out;
  };
}
/** Sets every file's mtime an hour back: none is racy (modified too close to when it was read). */
function age(root: string): void {
  const past = new Date(Date.now() - 3_600_000);
  const visit = (at: string) => {
    for (const e of fs.readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, e.name);
      if (e.isDirectory()) visit(full);
      else if (!full.startsWith(dbFile)) fs.utimesSync(full, past, past);
    }
  };
  visit(root);
}

beforeEach(() => {
  dir = makeTempDir("forkpoint-wsscan-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  dbFile = path.join(dir, "forkpoint.db");
  fp = openForkpoint({ path: dbFile });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

describe("the stat cache", () => {
  it("reads only the files whose stat data changed, also after the database is opened again", async () => {
    for (let i = 0; i < 40; i++) write(`src/d${i % 4}/f${i}.ts`, `export const v${i} = ${i};\n`.repeat(20));
    age(ws);
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const count = counter(s);
    await s.checkpoint({ name: "unchanged" });
    expect(count().reads).toBe(0);
    const hourAgo = new Date(Date.now() - 3_600_000);
    for (const [rel, text] of [
      ["src/d1/f1.ts", "changed 1"],
      ["src/d2/f2.ts", "changed 2"],
      ["src/new/n.ts", "new"],
    ] as const) {
      write(rel, text);
      fs.utimesSync(path.join(ws, rel), hourAgo, hourAgo);
    }
    await s.checkpoint({ name: "three" });
    expect(count().reads).toBe(3);

    // Reopened: no watcher saw what happened meanwhile, so the tree is walked; the stat data come from the database.
    await fp.close();
    fp = openForkpoint({ path: dbFile });
    const again = await fp.getSession(s.id, { userId: "u" });
    write("src/d3/f3.ts", "changed 3");
    const cp = await again.checkpoint({ name: "after reopening" });
    expect([stateOf(again).walks, stateOf(again).cache.reads]).toEqual([1, 1]);
    // What it captured is the directory: back to it from the first checkpoint restores every file.
    const expected = tree();
    const [first] = (await fp.listCheckpoints({ userId: "u", sessionId: s.id, name: "unchanged" })).items;
    await again.rollback(first!.id, { scope: "files" });
    expect(tree()["src/d3/f3.ts"]).toBe(`export const v3 = 3;\n`.repeat(20));
    await again.rollback(cp.id, { scope: "files" });
    expect(tree()).toEqual(expected);
  });

  it("reads again a file rewritten with the same size right after it was read (racy git)", async () => {
    write("a.txt", "aaaa");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    for (const text of ["bbbb", "cccc", "dddd"]) {
      write("a.txt", text);
      const cp = await s.checkpoint({ name: text });
      write("a.txt", "zzzz");
      expect((await s.diffFiles(cp.id, "disk")).patch).toContain(`-${text}\n\\ No newline at end of file\n+zzzz`);
    }
  });
});

describe("the watcher", () => {
  it("names every kind of change: each checkpoint restores to exactly the directory it captured", async () => {
    write("keep/a.txt", "a");
    write("old/b.txt", "b");
    write("old/deep/c.txt", "c");
    write("swap", "a file, then a directory");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const count = counter(s);
    const steps: (() => void)[] = [
      () => write("new/deeper/still/d.txt", "a new directory tree, made at once"),
      () => fs.renameSync(path.join(ws, "old"), path.join(ws, "moved")),
      () => fs.rmSync(path.join(ws, "moved/deep"), { recursive: true }),
      () => (write("keep/a.txt", "changed"), fs.rmSync(path.join(ws, "new"), { recursive: true })),
      () => (fs.mkdirSync(path.join(ws, "empty/nested"), { recursive: true }), write("keep/z.txt", "z")),
    ];
    const captured: { id: string; files: Record<string, string> }[] = [];
    for (const step of steps) {
      step();
      captured.push({ id: (await s.checkpoint()).id, files: tree() });
    }
    // A file that becomes a directory (a restore does not turn one into the other: the snapshots are compared).
    fs.rmSync(path.join(ws, "swap"));
    write("swap/inside.txt", "now a directory");
    const swapped = await s.checkpoint();
    const d = await s.diffFiles(captured.at(-1)!.id, swapped.id);
    expect([d.added, d.deleted]).toEqual([["swap/inside.txt"], ["swap"]]);
    // Only what the watcher named was looked at: no whole walk after the first.
    expect(count().walks).toBe(0);
    fs.rmSync(path.join(ws, "swap"), { recursive: true });
    write("swap", "a file, then a directory");
    await s.checkpoint();
    for (const { id, files } of [...captured].reverse()) {
      await s.rollback(id, { scope: "files" });
      expect(tree()).toEqual(files);
    }
  });

  it("a burst of changes too large to trust the count of its events is walked, and nothing is missed", async () => {
    write("seed.txt", "seed");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const count = counter(s);
    fs.mkdirSync(path.join(ws, "burst"));
    // Creating a file makes at least two events (create, modify): more than half of the kernel's default queue of 16,384.
    for (let i = 0; i < 9000; i++) fs.writeFileSync(path.join(ws, "burst", `f${i}`), String(i));
    const cp = await s.checkpoint({ name: "burst" });
    expect(count().walks).toBe(1);
    fs.rmSync(path.join(ws, "burst"), { recursive: true });
    await s.checkpoint({ name: "gone" });
    await s.rollback(cp.id, { scope: "files" });
    expect(fs.readdirSync(path.join(ws, "burst"))).toHaveLength(9000);
    expect(fs.readFileSync(path.join(ws, "burst", "f8999"), "utf8")).toBe("8999");
  });
});

describe(".gitignore files", () => {
  const layout = () => {
    write(".gitignore", "*.log\nbuild/\n");
    write("a.log", "ignored");
    write("build/out.js", "ignored");
    write("sub/.gitignore", "!keep.log\n*.tmp\n");
    write("sub/keep.log", "kept by a negation");
    write("sub/x.tmp", "ignored here");
    write("sub/y.ts", "kept");
    write(".git/HEAD", "ref: refs/heads/main");
    write("vendor/.git/config", "a nested repository's");
  };

  it("are honoured, nested and with negations; .git is never captured; a change of one is a change of the rules", async () => {
    layout();
    const s = await fp.createSession({ userId: "u" });
    expect((await s.attachWorkspace(ws)).files).toBe(4);
    const cp = await s.checkpoint({ name: "start" });
    write("sub/.gitignore", "!keep.log\n*.tmp\ny.ts\n");
    write("sub/z.ts", "new");
    const later = await s.checkpoint({ name: "rules changed" });
    const d = await s.diffFiles(cp.id, later.id);
    expect([d.added, d.modified, d.deleted]).toEqual([["sub/z.ts"], ["sub/.gitignore"], ["sub/y.ts"]]);
    // A restore never overwrites what forkpoint does not capture now: sub/y.ts is ignored, and refused while it differs.
    write("sub/y.ts", "changed by hand");
    await expect(s.rollback(cp.id, { scope: "files" })).rejects.toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(tree()["sub/y.ts"]).toBe("changed by hand");
    write("sub/y.ts", "kept");
    await s.rollback(cp.id, { scope: "files" });
    expect(tree()).toMatchObject({
      "sub/y.ts": "kept",
      ".git/HEAD": "ref: refs/heads/main",
      "a.log": "ignored",
      "sub/x.tmp": "ignored here",
    });
    expect(tree()["sub/z.ts"]).toBeUndefined();
  });

  it("gitignore: false reads the directory as before they were honoured (exclude only)", async () => {
    layout();
    const s = await fp.createSession({ userId: "u" });
    expect((await s.attachWorkspace(ws, { gitignore: false, exclude: ["build/"] })).files).toBe(8);
    const cp = await s.checkpoint();
    expect((await s.diffFiles(cp.id, "disk")).patch).toBe("");
    // A snapshot is restored only under the rules it was read under.
    await s.attachWorkspace(ws, { exclude: ["build/"] });
    await expect(s.rollback(cp.id, { scope: "files" })).rejects.toMatchObject({ field: "scope" });
  });
});
