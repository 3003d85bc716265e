// A process killed in the middle of a move on a session with a workspace: the files its finished undos and replays
// changed are forkpoint's own doing, so recovery restores the target's files over them and the next move finds no
// drift; only what the interrupted step may have done is unknown. Where no watcher runs (not Linux, or a file system
// without events) a scan walks the tree, so the changes are absorbed per phase only and these crashes leave drift.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineTool, type Forkpoint, type SessionHandle } from "../../src/index.js";
import { readOrNull, writeFileTool, type WriteArgs, type WriteResult } from "../fixtures/file-tools.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { expireLeases, openForkpoint } from "../fixtures/backend.js";
import { startWorker } from "../fixtures/workers.js";
import { watchableFileSystem } from "../../src/sessions/workspace/watch.js";

const WORKER = fileURLToPath(new URL("../fixtures/stalled-move.ts", import.meta.url));
let dir: string;
let ws: string;
let db: string;
let fp: Forkpoint;

const file = (rel: string) => path.join(ws, rel);
/** In this process stall_write only writes (its undo and replay stall in the child). */
const stallWrite = defineTool<WriteArgs, WriteResult>({
  name: "stall_write",
  run: (args) => {
    fs.writeFileSync(args.path, args.text);
    return { previous: null };
  },
  undo: ({ args }) => fs.rmSync(args.path, { force: true }),
});
/** Each step's changes are absorbed as it ends only where a watcher makes a scan cheap. */
const watched = watchableFileSystem(os.tmpdir());
const open = (recover = true) => (fp = openForkpoint({ path: db, tools: [writeFileTool(), stallWrite], recover }));

beforeEach(() => {
  dir = makeTempDir("forkpoint-move-crash-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  db = path.join(dir, "forkpoint.db");
});
afterEach(async () => {
  await fp?.close();
  removeDir(dir);
});

/**
 * Runs the move in a child until its stall_write step starts, kills it there (after `whileStalled`: a save by hand as
 * the step runs), and reopens with recovery.
 */
async function killedMidMove(
  s: SessionHandle,
  kind: "rollback" | "switch",
  target: string,
  scope: "both" | "conversation",
  whileStalled: () => void = () => undefined,
) {
  await fp.close();
  const marker = path.join(dir, "stalled");
  const w = startWorker(WORKER, [db, s.id, kind, target, scope, marker]);
  while (!fs.existsSync(marker) && w.child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
  whileStalled();
  w.child.kill("SIGKILL");
  const run = await w.done;
  expect(run.stderr).toBe("");
  await expireLeases(db);
  // Recovered by the explicit call, which reports it.
  open(false);
  const report = await fp.recover();
  return { report, s: await fp.getSession(s.id, { userId: "u" }) };
}

/** Between rounds of one test: the database closed, the killed worker's marker and the workspace's files gone. */
async function nextRound() {
  await fp.close();
  fs.rmSync(path.join(dir, "stalled"));
  fs.rmSync(ws, { recursive: true });
  fs.mkdirSync(ws);
}

it.skipIf(!watched)('a "both" move killed after an undo finished restores the target\'s files on recovery', async () => {
  fs.writeFileSync(file("a.txt"), "0");
  let s = await open().createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("stall_write", { path: file("b.txt"), text: "s" });
  await s.invoke("write_file", { path: file("a.txt"), text: "1" });
  const root = (await s.branches())[0]!.id;

  // Undone last first: write_file's undo puts "0" back, then stall_write's undo stalls.
  const { report, s: after } = await killedMidMove(s, "rollback", start.id, "both");
  s = after;
  expect(report.failed).toEqual([]);
  expect(report.resumed).toHaveLength(1);
  expect(report.resumed[0]!.unknown.map((t) => t.tool)).toEqual(["stall_write"]);
  expect(readOrNull(file("a.txt"))).toBe("0");
  // The stalled undo may not have run (it did not): its call's file stays as it is until the call is resolved.
  expect(readOrNull(file("b.txt"))).toBe("s");
  expect((await s.info()).currentBranchId).not.toBe(root);

  // Nothing counts as drift: the next move goes through, and the call still applied there has its file.
  await s.switchBranch(root, { scope: "both" });
  expect(readOrNull(file("a.txt"))).toBe("1");
  expect(readOrNull(file("b.txt"))).toBe("s");
});

it.skipIf(!watched)("a move killed after a replay finished leaves no drift for the next one", async () => {
  fs.writeFileSync(file("a.txt"), "0");
  const s = await open().createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("write_file", { path: file("a.txt"), text: "1" });
  await s.checkpoint({ name: "mid" });
  await s.invoke("write_file", { path: file("d.txt"), text: "d" });
  await s.invoke("stall_write", { path: file("e.txt"), text: "e" });
  const root = (await s.branches())[0]!.id;
  await s.rollback(start.id, { scope: "both" });
  expect(readOrNull(file("d.txt"))).toBeNull();

  // Back to the root's head: mid's files come back, d.txt is replayed, then stall_write's replay stalls.
  const { report, s: after } = await killedMidMove(s, "switch", root, "both");
  expect(report.failed).toEqual([]);
  expect(readOrNull(file("a.txt"))).toBe("1");
  expect(readOrNull(file("d.txt"))).toBe("d");
  await after.rollback(start.id, { scope: "both" });
  expect(readOrNull(file("a.txt"))).toBe("0");
  expect(readOrNull(file("d.txt"))).toBeNull();
});

it.skipIf(!watched)("the files a recovered conversation move changes are not drift", async () => {
  fs.writeFileSync(file("a.txt"), "0");
  const s = await open().createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("write_file", { path: file("a.txt"), text: "1" });
  await s.invoke("stall_write", { path: file("b.txt"), text: "s" });
  await s.invoke("write_file", { path: file("c.txt"), text: "c" });
  const root = (await s.branches())[0]!.id;

  // c.txt's undo finishes, stall_write's stalls; recovery then undoes a.txt's write.
  const { report, s: after } = await killedMidMove(s, "rollback", start.id, "conversation");
  expect(report.failed).toEqual([]);
  expect(readOrNull(file("a.txt"))).toBe("0");
  expect(readOrNull(file("c.txt"))).toBeNull();
  await after.switchBranch(root, { scope: "both" });
  expect(readOrNull(file("a.txt"))).toBe("1");
  expect(readOrNull(file("c.txt"))).toBe("c");
});

// A save by hand while the killed process ran the move, in a file an undo still to run writes: the resumed move's undo
// has that write taken back, as the move would have had no crash stopped it; the save stays, drift.
it.skipIf(!watched)("a file saved by hand during the move is not written over by the undos recovery runs", async () => {
  for (const scope of ["both", "conversation"] as const) {
    db = path.join(dir, `saved-${scope}.db`);
    fs.writeFileSync(file("a.txt"), "0");
    let s = await open().createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const start = await s.checkpoint({ name: "start" });
    await s.invoke("write_file", { path: file("a.txt"), text: "1" });
    await s.invoke("stall_write", { path: file("b.txt"), text: "s" });
    const end = await s.checkpoint({ name: "end" });

    // Undone last first: stall_write's undo stalls as the user saves a.txt; write_file's undo is still to run.
    const { report, s: after } = await killedMidMove(s, "rollback", start.id, scope, () =>
      fs.writeFileSync(file("a.txt"), "saved by hand"),
    );
    s = after;
    expect(report.resumed.flatMap((r) => r.unknown.map((t) => t.tool))).toEqual(scope === "both" ? [] : ["stall_write"]);
    // A "both" move's files step refuses the drift after a crash stopped a step (see workspace-recovery.test.ts).
    expect(report.failed).toEqual(
      scope === "both" ? [expect.objectContaining({ error: expect.objectContaining({ code: "WORKSPACE_DRIFT" }) })] : [],
    );
    expect(readOrNull(file("a.txt"))).toBe("saved by hand");
    // Kept in no checkpoint: the next rewind refuses to overwrite it.
    await expect(s.rollback(end.id, { scope: "both" })).rejects.toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(readOrNull(file("a.txt"))).toBe("saved by hand");
    await nextRound();
  }
});

// A save by hand while the killed process ran the move, in a file a replay still to run writes: the resumed move stops
// before that replay (WORKSPACE_DRIFT), the save on disk, as the move would have had no crash stopped it; kept in a
// checkpoint, the move called again goes on.
it.skipIf(!watched)("a resumed move stops before a replay over a file saved by hand during the move", async () => {
  for (const scope of ["both", "conversation"] as const) {
    db = path.join(dir, `replay-${scope}.db`);
    fs.writeFileSync(file("a.txt"), "0");
    let s = await open().createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const start = await s.checkpoint({ name: "start" });
    await s.invoke("stall_write", { path: file("b.txt"), text: "s" });
    await s.invoke("write_file", { path: file("a.txt"), text: "1" });
    const root = (await s.branches())[0]!.id;
    await s.rollback(start.id, { scope: "both" });
    expect(readOrNull(file("a.txt"))).toBe("0");

    // Replayed in order: stall_write's replay stalls as the user saves a.txt; write_file's replay is still to run.
    const { report, s: after } = await killedMidMove(s, "switch", root, scope, () => fs.writeFileSync(file("a.txt"), "saved by hand"));
    s = after;
    expect(report.failed).toEqual([
      expect.objectContaining({ error: expect.objectContaining({ code: "WORKSPACE_DRIFT", message: expect.stringContaining("a.txt") }) }),
    ]);
    expect(readOrNull(file("a.txt"))).toBe("saved by hand");
    // The stalled replay changed nothing; kept in a checkpoint, the save stays for the switch called again to write over.
    const stalled = report.unknown.find((c) => c.tool === "stall_write")!;
    await s.resolveToolCall(stalled.id, { status: "failed", error: "killed" });
    const kept = await s.checkpoint({ name: "kept" });
    const again = await s.switchBranch(root, { scope });
    expect(again.replayed.map((c) => c.tool)).toEqual(["stall_write", "write_file"]);
    expect(readOrNull(file("b.txt"))).toBe("s");
    expect(readOrNull(file("a.txt"))).toBe("1");
    await s.rollback(kept.id, { scope: "both" });
    expect(readOrNull(file("a.txt"))).toBe("saved by hand");
    await nextRound();
  }
});

// The same with the undo still to run a recorded call's (ran elsewhere: no record of the files its run changed).
it.skipIf(!watched)("a file saved by hand during the move is not written over by a recorded call's undo recovery runs", async () => {
  db = path.join(dir, "saved-recorded.db");
  fs.writeFileSync(file("a.txt"), "0");
  let s = await open().createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  fs.writeFileSync(file("a.txt"), "1");
  await s.recordToolCall({ tool: "write_file", args: { path: file("a.txt"), text: "1" }, result: { previous: "0" } });
  await s.invoke("stall_write", { path: file("b.txt"), text: "s" });
  const end = await s.checkpoint({ name: "end" });

  const { report, s: after } = await killedMidMove(s, "rollback", start.id, "conversation", () =>
    fs.writeFileSync(file("a.txt"), "saved by hand"),
  );
  s = after;
  expect(report.failed).toEqual([]);
  expect(readOrNull(file("a.txt"))).toBe("saved by hand");
  await expect(s.rollback(end.id, { scope: "both" })).rejects.toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(file("a.txt"))).toBe("saved by hand");
});

// What no checkpoint can keep, put where an undo still to run writes while the killed process ran the move: recovery
// refuses to go on (WORKSPACE_DRIFT) before that undo, as the move itself refuses before its first step; the file stays.
it.skipIf(!watched)("a resumed move stops before an undo over a file forkpoint cannot keep", async () => {
  for (const scope of ["both", "conversation"] as const) {
    db = path.join(dir, `uncaptured-${scope}.db`);
    fs.writeFileSync(file("a.txt"), "0");
    let s = await open().createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const start = await s.checkpoint({ name: "start" });
    await s.invoke("write_file", { path: file("a.txt"), text: "1" });
    await s.invoke("stall_write", { path: file("b.txt"), text: "s" });
    const big = Buffer.alloc(17 * 1024 * 1024, 7);

    const { report, s: after } = await killedMidMove(s, "rollback", start.id, scope, () => fs.writeFileSync(file("a.txt"), big));
    s = after;
    expect(report.failed).toEqual([
      expect.objectContaining({ error: expect.objectContaining({ code: "WORKSPACE_DRIFT", message: expect.stringContaining("a.txt") }) }),
    ]);
    expect(fs.readFileSync(file("a.txt")).equals(big)).toBe(true);
    await nextRound();
  }
});
