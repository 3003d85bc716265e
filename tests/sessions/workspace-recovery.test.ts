// Workspace restores interrupted by a crash: journaled before any file moves, finished on recovery when every file
// is at its old or its new version, left alone (as drift) when someone changed a file since, and waited for while
// the process writing them still runs. The crash state is built on real files and a real database; the last test
// kills real child processes in the middle of restores.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConflictError, type Checkpoint, type Forkpoint, type SessionHandle } from "../../src/index.js";
import { processStart } from "../../src/sessions/core/process-identity.js";
import { filesUnder, makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint, sqlOn } from "../fixtures/backend.js";
import { nodeArgs } from "../fixtures/compiled.js";

const WORKER = fileURLToPath(new URL("../fixtures/workspace-restore-worker.ts", import.meta.url));
const RECOVER = fileURLToPath(new URL("../fixtures/recover-once.ts", import.meta.url));
let dir: string;
let ws: string;
let dbFile: string;
let fp: Forkpoint;

const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws, rel), text);
};
/** Every file under the workspace but the database's, with its text. */
const tree = () => filesUnder(ws, dbFile);
const journalOf = async (sessionId: string) =>
  (await sqlOn<{ restoring: string | null }>(dbFile, "SELECT restoring FROM workspaces WHERE session_id = $1", [sessionId]))[0]!.restoring;
/**
 * Journals a restore to `cp`'s files as if `pid` had started it and died (or still ran) before finishing, from the
 * session's current branch and head (scope "both": the conversation has not moved).
 */
const journalRestore = async (
  sessionId: string,
  cp: Checkpoint,
  pid: number,
  pidStart: string | null,
  scope: "files" | "both" = "files",
  leave?: string[],
) => {
  const one = async (sql: string, param: string) => Object.values((await sqlOn(dbFile, sql, [param]))[0]!)[0];
  const manifestId = await one("SELECT manifest_id FROM checkpoint_files WHERE checkpoint_id = $1", cp.id);
  const fromManifestId = await one("SELECT manifest_id FROM workspaces WHERE session_id = $1", sessionId);
  const fromBranchId = (await one("SELECT current_branch_id FROM sessions WHERE id = $1", sessionId)) as string;
  const fromHead = await one("SELECT coalesce(max(position), 0) AS head FROM entries WHERE branch_id = $1", fromBranchId);
  const journal = { manifestId, fromManifestId, scope, fromBranchId, fromHead, pid, pidStart, pids: [pid], leave };
  await sqlOn(dbFile, "UPDATE workspaces SET restoring = $1 WHERE session_id = $2", [JSON.stringify(journal), sessionId]);
};
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

/** The directory halfway through restoring B → A by process `pid`: a renamed, c still staged, d already deleted. */
function halfRestoredToA(pid: number): void {
  write("a.txt", "A1");
  write(`sub/c.txt.forkpoint-${pid}.tmp`, "C1");
  fs.rmSync(path.join(ws, "d.txt"));
}

/** Checkpoints A and B, then a restore B → A by a process that died halfway (not journaled yet: tests do that). */
async function crashedHalfwayToA(): Promise<{ s: SessionHandle; a: Checkpoint; b: Checkpoint; pid: number }> {
  const versions = await twoVersions();
  const pid = deadPid();
  halfRestoredToA(pid);
  return { ...versions, pid };
}

async function reopen(): Promise<Forkpoint> {
  await fp.close();
  fp = openForkpoint({ path: dbFile, recover: false });
  return fp;
}

describe("workspace restore interrupted by a crash", () => {
  it("a move journals the restore before touching files and clears the journal when done", async () => {
    const { s, a } = await twoVersions();
    expect(await journalOf(s.id)).toBeNull();
    await s.rollback(a.id, { scope: "files" });
    expect(await journalOf(s.id)).toBeNull();
    expect(tree()).toEqual({ "a.txt": "A1", "b.txt": "B", "sub/c.txt": "C1" });
  });

  it("removes a leftover staged under the short name a long file name gets", async () => {
    const long = "l".repeat(250) + ".txt";
    write(long, "L1");
    const { s, a, pid } = await crashedHalfwayToA();
    const staged = `.forkpoint-${pid}-${createHash("sha256").update(long).digest("hex").slice(0, 16)}.tmp`;
    write(staged, "L1");
    await journalRestore(s.id, a, pid, null);
    const report = await (await reopen()).recover();
    expect(report.workspaces[0]).toMatchObject({
      outcome: "completed",
      paths: expect.arrayContaining([staged, `sub/c.txt.forkpoint-${pid}.tmp`]),
    });
    expect(fs.existsSync(path.join(ws, staged))).toBe(false);
    expect(tree()).toEqual({ "a.txt": "A1", "b.txt": "B", "sub/c.txt": "C1", [long]: "L1" });
  });

  it("is finished on recovery: every file at the target, leftover staged files removed, no drift afterwards", async () => {
    const { s, a, b, pid } = await crashedHalfwayToA();
    await journalRestore(s.id, a, pid, null);
    const report = await (await reopen()).recover();
    expect(report.workspaces).toEqual([
      { sessionId: s.id, dir: fs.realpathSync(ws), outcome: "completed", paths: [`sub/c.txt.forkpoint-${pid}.tmp`], detail: null },
    ]);
    expect(tree()).toEqual({ "a.txt": "A1", "b.txt": "B", "sub/c.txt": "C1" });
    expect(await journalOf(s.id)).toBeNull();
    const again = await fp.getSession(s.id, { userId: "alice" });
    expect(await again.diffFiles(a.id, "disk")).toMatchObject({ added: [], modified: [], deleted: [] });
    await again.rollback(b.id, { scope: "files" }); // what forkpoint last wrote is A now: no drift
    expect(tree()).toEqual({ "a.txt": "A2", "b.txt": "B", "d.txt": "D2" });
  });

  it("opening the database runs it too, and reports it in the recovery event", async () => {
    const { s, a, pid } = await crashedHalfwayToA();
    await journalRestore(s.id, a, pid, null);
    await fp.close();
    fp = openForkpoint({ path: dbFile });
    const reports: unknown[] = [];
    fp.on("recovery", (r) => reports.push(r));
    await fp.ready;
    expect(tree()).toEqual({ "a.txt": "A1", "b.txt": "B", "sub/c.txt": "C1" });
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ workspaces: [{ outcome: "completed" }] });
  });

  it("a path the move left as it is (changed while its undos ran) is not written by recovery either", async () => {
    const { s, a, pid } = await crashedHalfwayToA();
    write("a.txt", "A2"); // as the move's undos left it (a save by hand): the restore had not written it
    await journalRestore(s.id, a, pid, null, "files", ["a.txt"]);
    const report = await (await reopen()).recover();
    expect(report.workspaces[0]).toMatchObject({ outcome: "completed" });
    expect(tree()).toEqual({ "a.txt": "A2", "b.txt": "B", "sub/c.txt": "C1" });
    const again = await fp.getSession(s.id, { userId: "alice" });
    expect(await again.diffFiles(a.id, "disk")).toMatchObject({ added: [], modified: ["a.txt"], deleted: [] });
  });

  it("a file changed by someone else since the crash leaves the directory as it is, reported as drift", async () => {
    const { s, a, b, pid } = await crashedHalfwayToA();
    write("b.txt", "edited by hand");
    fs.rmSync(path.join(ws, "a.txt")); // in both versions: no restore deletes it
    await journalRestore(s.id, a, pid, null);
    const report = await (await reopen()).recover();
    expect(report.workspaces).toEqual([
      { sessionId: s.id, dir: fs.realpathSync(ws), outcome: "drift", paths: ["a.txt", "b.txt"], detail: null },
    ]);
    expect(tree()).toEqual({ "b.txt": "edited by hand" }); // only forkpoint's staged leftover is gone
    expect(await journalOf(s.id)).toBeNull();
    const again = await fp.getSession(s.id, { userId: "alice" });
    expect(await rejectionOf(again.rollback(b.id, { scope: "files" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(await rejectionOf(again.rollback(b.id, { scope: "files" }))).toBeInstanceOf(ConflictError);
  });

  it("recovery at open over a changed file tells the logger the directory is left partly restored", async () => {
    const { s, a, pid } = await crashedHalfwayToA();
    write("b.txt", "edited by hand");
    await journalRestore(s.id, a, pid, null);
    await fp.close();
    const warned: string[] = [];
    fp = openForkpoint({ path: dbFile, logger: { warn: (message: string) => void warned.push(message) } });
    await fp.ready;
    expect(warned).toEqual([expect.stringMatching(/interrupted a restore of .*\(b\.txt\).*partly restored/)]);
    expect(tree()).toMatchObject({ "b.txt": "edited by hand" });
  });

  it("a link or a folder in the way of a target path is drift: nothing is written through it or over it", async () => {
    const { s, a, pid } = await crashedHalfwayToA();
    fs.rmSync(path.join(ws, `sub/c.txt.forkpoint-${pid}.tmp`));
    const outside = path.join(dir, "outside");
    fs.mkdirSync(outside);
    fs.rmSync(path.join(ws, "sub"), { recursive: true });
    fs.symlinkSync(outside, path.join(ws, "sub"));
    await journalRestore(s.id, a, pid, null);
    const report = await (await reopen()).recover();
    expect(report.workspaces).toMatchObject([{ outcome: "drift", paths: [], detail: "sub is a symbolic link" }]);
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(await journalOf(s.id)).toBeNull();
  });

  it("removes only what the journaled process staged: a user's file named like a staged one is kept", async () => {
    const { s, a, pid } = await crashedHalfwayToA();
    write("sub/c.txt.forkpoint-1.tmp", "mine");
    write("b.txt.forkpoint-2.tmp", "mine too");
    await journalRestore(s.id, a, pid, null);
    await fp.close();
    // The user's look-alikes are not in the workspace's versions: excluded, so they are not drift either.
    fp = openForkpoint({ path: dbFile, recover: false });
    await sqlOn(dbFile, "UPDATE workspaces SET exclude = $1", [JSON.stringify(["*.forkpoint-1.tmp", "*.forkpoint-2.tmp"])]);
    const report = await fp.recover();
    expect(report.workspaces).toMatchObject([{ outcome: "completed", paths: [`sub/c.txt.forkpoint-${pid}.tmp`] }]);
    expect(fs.readFileSync(path.join(ws, "sub/c.txt.forkpoint-1.tmp"), "utf8")).toBe("mine");
    expect(fs.readFileSync(path.join(ws, "b.txt.forkpoint-2.tmp"), "utf8")).toBe("mine too");
  });

  it('a "both" move that crashed before its conversation moved gets its old files back', async () => {
    const { s, a, pid } = await crashedHalfwayToA();
    await journalRestore(s.id, a, pid, null, "both");
    const report = await (await reopen()).recover();
    expect(report.workspaces).toMatchObject([{ outcome: "restored", paths: [`sub/c.txt.forkpoint-${pid}.tmp`] }]);
    expect(tree()).toEqual({ "a.txt": "A2", "b.txt": "B", "d.txt": "D2" });
    expect(await journalOf(s.id)).toBeNull();
  });

  it('a "both" move that crashed after its conversation moved gets its files finished', async () => {
    const { s, a, pid } = await crashedHalfwayToA();
    await s.append({ role: "user", content: "after B" }); // so the rollback to A forks a branch
    await journalRestore(s.id, a, pid, null, "both");
    await s.rollback(a.id); // the conversation moved (scope "conversation" leaves the files alone)
    const report = await (await reopen()).recover();
    expect(report.workspaces).toMatchObject([{ outcome: "completed" }]);
    expect(tree()).toEqual({ "a.txt": "A1", "b.txt": "B", "sub/c.txt": "C1" });
  });

  it("a restore that cannot be finished now is reported failed and kept for a later recover(); moves wait for it", async () => {
    const { s, a, b, pid } = await crashedHalfwayToA();
    await journalRestore(s.id, a, pid, null);
    await sqlOn(dbFile, "UPDATE file_blobs SET content = $1 WHERE content = $2", [Buffer.from("damaged"), Buffer.from("C1")]);
    const again = await reopen();
    const report = await again.recover();
    expect(report.workspaces).toMatchObject([{ outcome: "failed", detail: expect.stringMatching(/does not match its hash/) }]);
    expect(await journalOf(s.id)).not.toBeNull();
    const handle = await again.getSession(s.id, { userId: "alice" });
    expect(await rejectionOf(handle.rollback(b.id, { scope: "files" }))).toMatchObject({ code: "MOVE_IN_PROGRESS" });
    expect(await rejectionOf(handle.attachWorkspace(ws))).toMatchObject({ code: "MOVE_IN_PROGRESS" });
  });

  it("several processes recovering at once: one finishes it, none undoes another's work", async () => {
    const files = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`f/${i % 5}/${i}.txt`, `old ${i} `.repeat(300)]));
    for (const [rel, text] of Object.entries(files)) write(rel, text);
    const s = await fp.createSession({ userId: "alice" });
    await s.attachWorkspace(ws);
    const a = await s.checkpoint({ name: "A" });
    for (const rel of Object.keys(files)) write(rel, `new ${rel} `.repeat(300));
    await s.checkpoint({ name: "B" });
    const pid = deadPid();
    // Halfway back to A: the first third renamed, the second staged, the last untouched.
    Object.keys(files).forEach((rel, i) => {
      if (i < 100) write(rel, files[rel]!);
      else if (i < 200) write(`${rel}.forkpoint-${pid}.tmp`, files[rel]!);
    });
    await journalRestore(s.id, a, pid, null);
    await fp.close();
    const recoverers = Array.from({ length: 3 }, () =>
      spawn(process.execPath, [...nodeArgs(RECOVER), dbFile], { stdio: ["pipe", "pipe", "inherit"] }),
    );
    const outputs = recoverers.map((child) => {
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      return {
        ready: new Promise<void>((ok) => child.stdout.once("data", () => ok())),
        done: new Promise<string>((ok) => child.once("exit", () => ok(out))),
      };
    });
    await Promise.all(outputs.map((o) => o.ready));
    for (const child of recoverers) child.stdin.write("go\n");
    const printed = await Promise.all(outputs.map((o) => o.done));
    const outcomes = printed.flatMap((o) =>
      (JSON.parse(o.trim().split("\n").pop()!) as { workspaces: { outcome: string }[] }).workspaces.map((w) => w.outcome),
    );
    expect(outcomes.filter((o) => o === "completed")).toHaveLength(1);
    expect(outcomes.every((o) => o === "completed" || o === "waiting")).toBe(true);
    fp = openForkpoint({ path: dbFile });
    await fp.ready;
    expect(tree()).toEqual(files);
    expect(await journalOf(s.id)).toBeNull();
  });

  it("waits while the process that journaled it still runs", async () => {
    const { s, a } = await twoVersions();
    const sleeper = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"]);
    halfRestoredToA(sleeper.pid!);
    try {
      await journalRestore(s.id, a, sleeper.pid!, processStart(sleeper.pid!));
      const before = tree();
      const report = await (await reopen()).recover();
      expect(report.workspaces).toEqual([
        { sessionId: s.id, dir: fs.realpathSync(ws), outcome: "waiting", paths: [], detail: `process ${sleeper.pid} is restoring it` },
      ]);
      expect(tree()).toEqual(before);
      expect(await journalOf(s.id)).not.toBeNull();
    } finally {
      sleeper.kill("SIGKILL");
    }
  });

  it("SIGKILL in the middle of restores: after recovery the directory is exactly one version, with no leftovers", async () => {
    // Enough files that a restore takes a while, so some kills land inside one.
    const files = (tag: string) =>
      Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`f/${i % 7}/${i}.txt`, `${tag}${i} `.repeat(400)]));
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

    const manifest = async (cp: Checkpoint) =>
      (await sqlOn<{ id: number }>(dbFile, "SELECT manifest_id AS id FROM checkpoint_files WHERE checkpoint_id = $1", [cp.id]))[0]!.id;
    const versionOf = new Map([
      [await manifest(a), versionA],
      [await manifest(b), versionB],
    ]);
    let journaledAtKill = 0;
    for (let round = 0; round < 6; round++) {
      const child = spawn(process.execPath, [...nodeArgs(WORKER), dbFile, s.id, a.id, b.id], { stdio: ["ignore", "pipe", "inherit"] });
      await new Promise<void>((ready) => child.stdout.once("data", () => ready()));
      // Kill as soon as a restore is journaled (or after a while, wherever the child is then).
      for (let i = 0; i < 400 && (await journalOf(s.id)) === null; i++) await new Promise((r) => setTimeout(r, 1));
      child.kill("SIGKILL");
      await new Promise((done) => child.once("exit", done));
      const journal = await journalOf(s.id);
      fp = openForkpoint({ path: dbFile, recover: false });
      const report = await fp.recover();
      if (journal !== null) {
        journaledAtKill++;
        expect(report.workspaces).toMatchObject([{ outcome: "completed" }]);
        expect(tree()).toEqual(versionOf.get((JSON.parse(journal) as { manifestId: number }).manifestId));
      } else {
        expect(report.workspaces).toEqual([]);
        expect([versionA, versionB]).toContainEqual(tree());
      }
      expect(await journalOf(s.id)).toBeNull();
      await fp.close();
    }
    expect(journaledAtKill).toBeGreaterThan(0);
    fp = openForkpoint({ path: dbFile });
  });
});
