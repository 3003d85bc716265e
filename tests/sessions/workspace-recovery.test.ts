// Workspace restores interrupted by a crash: journaled before any file moves, finished on recovery when every file
// is at its old or its new version, left alone (as drift) when someone changed a file since, and waited for while
// the process writing them still runs. The crash state is built on real files and a real database; the last test
// kills real child processes in the middle of restores.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConflictError, openForkpoint, type Checkpoint, type Forkpoint, type SessionHandle } from "../../src/index.js";
import { processStart } from "../../src/sessions/process-identity.js";
import { makeTempDir, rejectionOf, removeDir, withRawDatabase } from "../helpers.js";

const WORKER = fileURLToPath(new URL("../fixtures/workspace-restore-worker.ts", import.meta.url));
let dir: string;
let ws: string;
let dbFile: string;
let fp: Forkpoint;

const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws, rel), text);
};
/** Every file under the workspace but the database's, relative and sorted, with its text. */
const tree = () => {
  const out: Record<string, string> = {};
  const walk = (at: string) => {
    for (const e of fs.readdirSync(at, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(at, e.name);
      if (e.isDirectory()) walk(full);
      else if (!full.startsWith(dbFile)) out[path.relative(ws, full).split(path.sep).join("/")] = fs.readFileSync(full, "utf8");
    }
  };
  walk(ws);
  return out;
};
const journalOf = (sessionId: string) =>
  withRawDatabase(dbFile, (db) => db.prepare("SELECT restoring FROM workspaces WHERE session_id = ?").pluck().get(sessionId)) as string | null;
/** Journals a restore to `cp`'s files as if `pid` had started it and died (or still ran) before finishing. */
const journalRestore = (sessionId: string, cp: Checkpoint, pid: number, pidStart: string | null) =>
  withRawDatabase(dbFile, (db) => {
    const manifestId = db.prepare("SELECT manifest_id FROM checkpoint_files WHERE checkpoint_id = ?").pluck().get(cp.id);
    db.prepare("UPDATE workspaces SET restoring = ? WHERE session_id = ?").run(JSON.stringify({ manifestId, pid, pidStart }), sessionId);
  });
const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid!;

beforeEach(() => {
  dir = makeTempDir("forkpoint-wsrec-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  dbFile = path.join(ws, "forkpoint.db");
  fp = openForkpoint({ path: dbFile });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

/** A workspace with checkpoint A (a, b, c) and, after hand edits absorbed by checkpoint B, B (a changed, c gone, d new). */
async function twoVersions(): Promise<{ s: SessionHandle; a: Checkpoint; b: Checkpoint }> {
  write("a.txt", "A1");
  write("b.txt", "B");
  write("sub/c.txt", "C1");
  const s = await fp.createSession({ userId: "alice" });
  await s.attachWorkspace(ws);
  const a = await s.checkpoint({ name: "A" });
  write("a.txt", "A2");
  fs.rmSync(path.join(ws, "sub/c.txt"));
  write("d.txt", "D2");
  const b = await s.checkpoint({ name: "B" });
  return { s, a, b };
}

/** The directory halfway through restoring B → A: a renamed, c still staged, d already deleted. */
function halfRestoredToA(): void {
  write("a.txt", "A1");
  write("sub/c.txt.forkpoint-99999.tmp", "C1");
  fs.rmSync(path.join(ws, "d.txt"));
}

async function reopen(): Promise<Forkpoint> {
  await fp.close();
  fp = openForkpoint({ path: dbFile, recover: false });
  return fp;
}

describe("workspace restore interrupted by a crash", () => {
  it("a move journals the restore before touching files and clears the journal when done", async () => {
    const { s, a } = await twoVersions();
    expect(journalOf(s.id)).toBeNull();
    await s.rollback(a.id, { scope: "files" });
    expect(journalOf(s.id)).toBeNull();
    expect(tree()).toEqual({ "a.txt": "A1", "b.txt": "B", "sub/c.txt": "C1" });
  });

  it("is finished on recovery: every file at the target, leftover staged files removed, no drift afterwards", async () => {
    const { s, a, b } = await twoVersions();
    halfRestoredToA();
    journalRestore(s.id, a, deadPid(), null);
    const report = await (await reopen()).recover();
    expect(report.workspaces).toEqual([{ sessionId: s.id, dir: fs.realpathSync(ws), outcome: "completed", paths: ["sub/c.txt.forkpoint-99999.tmp"] }]);
    expect(tree()).toEqual({ "a.txt": "A1", "b.txt": "B", "sub/c.txt": "C1" });
    expect(journalOf(s.id)).toBeNull();
    const again = await fp.getSession(s.id, { userId: "alice" });
    expect(await again.diffFiles(a.id, "disk")).toMatchObject({ added: [], modified: [], deleted: [] });
    await again.rollback(b.id, { scope: "files" }); // what forkpoint last wrote is A now: no drift
    expect(tree()).toEqual({ "a.txt": "A2", "b.txt": "B", "d.txt": "D2" });
  });

  it("opening the database runs it too, and reports it in the recovery event", async () => {
    const { s, a } = await twoVersions();
    halfRestoredToA();
    journalRestore(s.id, a, deadPid(), null);
    await fp.close();
    fp = openForkpoint({ path: dbFile });
    const reports: unknown[] = [];
    fp.on("recovery", (r) => reports.push(r));
    await fp.ready;
    expect(tree()).toEqual({ "a.txt": "A1", "b.txt": "B", "sub/c.txt": "C1" });
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ workspaces: [{ outcome: "completed" }] });
  });

  it("a file changed by someone else since the crash leaves the directory as it is, reported as drift", async () => {
    const { s, a, b } = await twoVersions();
    halfRestoredToA();
    write("b.txt", "edited by hand");
    fs.rmSync(path.join(ws, "a.txt")); // in both versions: no restore deletes it
    journalRestore(s.id, a, deadPid(), null);
    const report = await (await reopen()).recover();
    expect(report.workspaces).toEqual([{ sessionId: s.id, dir: fs.realpathSync(ws), outcome: "drift", paths: ["a.txt", "b.txt"] }]);
    expect(tree()).toEqual({ "b.txt": "edited by hand" }); // only forkpoint's staged leftover is gone
    expect(journalOf(s.id)).toBeNull();
    const again = await fp.getSession(s.id, { userId: "alice" });
    expect(await rejectionOf(again.rollback(b.id, { scope: "files" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(await rejectionOf(again.rollback(b.id, { scope: "files" }))).toBeInstanceOf(ConflictError);
  });

  it("waits while the process that journaled it still runs", async () => {
    const { s, a } = await twoVersions();
    halfRestoredToA();
    const sleeper = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"]);
    try {
      journalRestore(s.id, a, sleeper.pid!, processStart(sleeper.pid!));
      const before = tree();
      const report = await (await reopen()).recover();
      expect(report.workspaces).toEqual([{ sessionId: s.id, dir: fs.realpathSync(ws), outcome: "waiting", paths: [] }]);
      expect(tree()).toEqual(before);
      expect(journalOf(s.id)).not.toBeNull();
    } finally {
      sleeper.kill("SIGKILL");
    }
  });

  it("SIGKILL in the middle of restores: after recovery the directory is exactly one version, with no leftovers", async () => {
    // Enough files that a restore takes a while, so some kills land inside one.
    const files = (tag: string) => Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`f/${i % 7}/${i}.txt`, `${tag}${i} `.repeat(400)]));
    const versionA = files("a");
    const versionB = { ...files("b"), "only-b.txt": "B" };
    for (const [rel, text] of Object.entries(versionA)) write(rel, text);
    const s = await fp.createSession({ userId: "alice" });
    await s.attachWorkspace(ws);
    const a = await s.checkpoint({ name: "A" });
    fs.rmSync(path.join(ws, "f"), { recursive: true });
    for (const [rel, text] of Object.entries(versionB)) write(rel, text);
    const b = await s.checkpoint({ name: "B" });
    await fp.close();

    let journaledAtKill = 0;
    for (let round = 0; round < 6; round++) {
      const child = spawn(process.execPath, ["--import", "tsx", WORKER, dbFile, s.id, a.id, b.id], { stdio: ["ignore", "pipe", "inherit"] });
      await new Promise<void>((ready) => child.stdout.once("data", () => ready()));
      await new Promise((r) => setTimeout(r, 5 + ((round * 37) % 60)));
      child.kill("SIGKILL");
      await new Promise((done) => child.once("exit", done));
      if (journalOf(s.id) !== null) journaledAtKill++;
      fp = openForkpoint({ path: dbFile, recover: false });
      const report = await fp.recover();
      expect(report.workspaces.every((w) => w.outcome === "completed")).toBe(true);
      const now = tree();
      expect([versionA, versionB]).toContainEqual(now);
      expect(journalOf(s.id)).toBeNull();
      await fp.close();
    }
    // Not an assertion on timing: a note in the output of how many kills landed inside a restore.
    console.log(`workspace crash loop: ${journaledAtKill} of 6 kills landed inside a restore`);
    fp = openForkpoint({ path: dbFile });
  });
});
