// A process SIGKILLed inside an undo handler during a "both" move: the undo's change is on disk, its step unknown, so
// recovery refuses the files as drift. The refusal's advice (resolve the call, then force or take a checkpoint, then
// move) ends with the files and the tool track agreeing, moving away and back again. Killed before the undo changed
// anything, the call's file stays in every later move until the call is resolved.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineTool, type Forkpoint, type SessionHandle } from "../../src/index.js";
import { readOrNull, writeFileTool, type WriteArgs, type WriteResult } from "../fixtures/file-tools.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { expireLeases, openForkpoint } from "../fixtures/backend.js";
import { startWorker } from "../fixtures/workers.js";
import { watchableFileSystem } from "../../src/sessions/workspace/watch.js";

const WORKER = fileURLToPath(new URL("../fixtures/half-undone-move.ts", import.meta.url));
let dir: string;
let ws: string;
let db: string;
let fp: Forkpoint;

const file = (rel: string) => path.join(ws, rel);
const files = () => ({ a: readOrNull(file("a.txt")), b: readOrNull(file("b.txt")) });
const track = async (s: SessionHandle) => (await s.toolTrack()).map((t) => [t.tool, t.applied]);
/** In this process stall_write appends (a replay too many shows) and deletes (its undo stalls in the child). */
const stallWrite = defineTool<WriteArgs, WriteResult>({
  name: "stall_write",
  run: (args) => (fs.appendFileSync(args.path, args.text), { previous: null }),
  undo: ({ args }) => fs.rmSync(args.path, { force: true }),
});
/** Only where a watcher absorbs each finished step's changes is write_file's undo not drift too. */
const watched = watchableFileSystem(os.tmpdir());
const open = (recover = true) => (fp = openForkpoint({ path: db, tools: [writeFileTool(), stallWrite], recover }));

beforeEach(() => {
  dir = makeTempDir("forkpoint-unknown-undo-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  db = path.join(dir, "forkpoint.db");
});
afterEach(async () => {
  await fp?.close();
  removeDir(dir);
});

/**
 * b.txt by stall_write, then a.txt "1" by write_file after checkpoint `start`; a child's "both" rollback to `start`
 * undoes write_file, then is killed inside stall_write's undo (`flags`: see half-undone-move.ts). Then recovered.
 */
async function killedInUndo(...flags: string[]) {
  fs.writeFileSync(file("a.txt"), "0");
  const s = await open().createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  if (flags.includes("recorded")) {
    // A call some framework ran: its file written, then recorded (no run of forkpoint's saw which paths it changed).
    fs.writeFileSync(file("b.txt"), "s");
    await s.recordToolCall({ tool: "stall_write", args: { path: file("b.txt"), text: "s" }, result: { previous: null } });
  } else await s.invoke("stall_write", { path: file("b.txt"), text: "s" });
  const stalled = (await s.toolTrack())[0]!.id;
  await s.invoke("write_file", { path: file("a.txt"), text: "1" });
  const root = (await s.info()).currentBranchId;
  await fp.close();

  const marker = path.join(dir, "stalled");
  const w = startWorker(WORKER, [db, s.id, start.id, marker, ...flags.filter((f) => f !== "recorded")]);
  while (!fs.existsSync(marker) && w.child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
  w.child.kill("SIGKILL");
  expect((await w.done).stderr).toBe("");
  await expireLeases(db);
  open(false);
  const report = await fp.recover();
  return { s: await fp.getSession(s.id, { userId: "u" }), start, root, stalled, report };
}

/** As `killedInUndo`, the undo killed once it deleted b.txt: recovery refuses the files. */
async function killedInsideUndo() {
  const { s, start, root, stalled, report } = await killedInUndo();
  expect(files()).toEqual({ a: "0", b: null });
  expect(report.failed).toHaveLength(1);
  const refusal = report.failed[0]!.error as Error & { code: string };
  expect(refusal.code).toBe("WORKSPACE_DRIFT");
  // The advice names the interrupted call and resolveToolCall before anything else.
  expect(refusal.message).toContain(`stall_write ${stalled}`);
  expect(refusal.message).toMatch(/first record what became of it with resolveToolCall/);
  expect((await s.info()).currentBranchId).toBe(root);
  return { s, start, root, stalled };
}

it.skipIf(!watched)("resolved, then forced: moving away and back leaves files and track agreeing", async () => {
  const { s, start, root, stalled } = await killedInsideUndo();
  // Retried as it is, the move is refused the same way.
  expect((await rejectionOf(s.rollback(start.id, { scope: "both" }))).code).toBe("WORKSPACE_DRIFT");
  // The undo did finish: b.txt is gone.
  const resolved = await s.resolveToolCall(stalled, { status: "succeeded", result: null });
  expect(resolved.applied).toBe(false);
  expect(await track(s)).toEqual([
    ["stall_write", false],
    ["write_file", false],
  ]);

  // b.txt's deletion (the undo's, resolved) is what the target has: nothing is overwritten, so nothing is saved.
  const moved = await s.rollback(start.id, { scope: "both", force: true });
  expect(moved.savedDrift).toBeUndefined();
  expect(moved.unknown).toEqual([]);
  expect(files()).toEqual({ a: "0", b: null });

  await s.switchBranch(root, { scope: "both" });
  expect(files()).toEqual({ a: "1", b: "s" });
  expect(await track(s)).toEqual([
    ["stall_write", true],
    ["write_file", true],
  ]);
  await s.rollback(start.id, { scope: "both" });
  expect(files()).toEqual({ a: "0", b: null });
});

it.skipIf(!watched)("a checkpoint first, then resolved as finished: moving back replays the call on its files", async () => {
  const { s, start, root, stalled } = await killedInsideUndo();
  // Taken while the undo's outcome is unknown: the snapshot says so, and learns it when the call is resolved.
  await s.checkpoint({ name: "kept" });
  await s.resolveToolCall(stalled, { status: "succeeded", result: null });

  await s.rollback(start.id, { scope: "both" });
  expect(files()).toEqual({ a: "0", b: null });
  await s.switchBranch(root, { scope: "both" });
  expect(files()).toEqual({ a: "1", b: "s" });
  expect(await track(s)).toEqual([
    ["stall_write", true],
    ["write_file", true],
  ]);
});

it.skipIf(!watched)("a checkpoint first, then resolved as changing nothing: the next moves undo it again", async () => {
  const { s, start, root, stalled } = await killedInsideUndo();
  // b.txt put back by hand, then kept; the undo is then said to have changed nothing: the call stays applied.
  fs.writeFileSync(file("b.txt"), "s");
  await s.checkpoint({ name: "kept" });
  await s.resolveToolCall(stalled, { status: "failed", error: "killed before it deleted anything" });
  expect(await track(s)).toEqual([
    ["stall_write", true],
    ["write_file", false],
  ]);

  await s.rollback(start.id, { scope: "both" });
  expect(files()).toEqual({ a: "0", b: null });
  await s.switchBranch(root, { scope: "both" });
  expect(files()).toEqual({ a: "1", b: "s" });
  expect(await track(s)).toEqual([
    ["stall_write", true],
    ["write_file", true],
  ]);
});

it.skipIf(!watched)("forced first, then resolved as finished: moving back replays the call on the saved files", async () => {
  const { s, start, root, stalled } = await killedInsideUndo();
  // The move leaves the call of unknown outcome as it is, and says so.
  const moved = await s.rollback(start.id, { scope: "both", force: true });
  expect(moved.unknown.map((t) => t.id)).toEqual([stalled]);
  expect(files()).toEqual({ a: "0", b: null });
  await s.resolveToolCall(stalled, { status: "succeeded", result: null });

  await s.switchBranch(root, { scope: "both" });
  expect(files()).toEqual({ a: "1", b: "s" });
  expect(await track(s)).toEqual([
    ["stall_write", true],
    ["write_file", true],
  ]);
});

it.each([
  ["run by invoke", []],
  ["recorded by recordToolCall", ["recorded"]],
])("killed before its undo changed anything: the call's file stays in every later move until resolved (%s)", async (_, how) => {
  // A forced rollback: recovery finishes it, b.txt kept as the call of unknown outcome left it.
  const { s, start, stalled, report } = await killedInUndo("before", "force", ...how);
  expect(report.unknown.map((t) => t.id)).toEqual([stalled]);
  expect(report.failed).toEqual([]);
  expect(report.resumed.map((m) => m.files)).toEqual([{ written: [], deleted: [], kept: ["b.txt"] }]);
  expect(files()).toEqual({ a: "0", b: "s" });

  // The session is at `start` already: no step runs, and b.txt stays (the target has none).
  const planned = await s.plan({ checkpointId: start.id, scope: "both" });
  expect(planned.files).toEqual({ written: [], deleted: [], kept: ["b.txt"] });
  for (const force of [false, true]) {
    const moved = await s.rollback(start.id, { scope: "both", force });
    expect(moved.unknown.map((t) => t.id)).toEqual([stalled]);
    expect(moved.files).toEqual({ written: [], deleted: [], kept: ["b.txt"] });
    expect(files()).toEqual({ a: "0", b: "s" });
  }

  // Said to have changed nothing, the call is applied: the next rewind undoes it.
  const resolved = await s.resolveToolCall(stalled, { status: "failed", error: "killed before it deleted anything" });
  expect(resolved.applied).toBe(true);
  const undone = await s.rollback(start.id, { scope: "both" });
  expect(undone.undone.map((t) => t.id)).toEqual([stalled]);
  expect(files()).toEqual({ a: "0", b: null });
});

it("two recoveries at once in one process: the second waits for the first and reports the same move", async () => {
  // c.txt by write_file first: its undo is the step left after the kill, held open here by a gate.
  fs.writeFileSync(file("a.txt"), "0");
  const s = await open().createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("write_file", { path: file("c.txt"), text: "c" });
  await s.invoke("stall_write", { path: file("b.txt"), text: "s" });
  const stalled = (await s.toolTrack())[1]!.id;
  await s.invoke("write_file", { path: file("a.txt"), text: "1" });
  await fp.close();
  const marker = path.join(dir, "stalled");
  const w = startWorker(WORKER, [db, s.id, start.id, marker, "before"]);
  while (!fs.existsSync(marker) && w.child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
  w.child.kill("SIGKILL");
  await w.done;
  await expireLeases(db);

  let entered!: () => void;
  let release!: () => void;
  const inUndo = new Promise<void>((r) => (entered = r));
  const gate = new Promise<void>((r) => (release = r));
  const base = writeFileTool();
  const gated = defineTool<WriteArgs, WriteResult>({
    ...base,
    undo: async (input, ctx) => (entered(), await gate, base.undo!(input, ctx)),
  });
  fp = openForkpoint({ path: db, tools: [gated, stallWrite], recover: false });
  const first = fp.recover();
  await inUndo;
  const second = fp.recover();
  release();
  const [one, two] = await Promise.all([first, second]);
  expect(one.resumed).toHaveLength(1);
  // Not an empty report while the move is still being finished: the same move, as it ended.
  expect(two.resumed.map((r) => r.branch.id)).toEqual(one.resumed.map((r) => r.branch.id));
  expect([two.waiting, two.failed]).toEqual([[], []]);
  expect(two.unknown.map((t) => t.id)).toContain(stalled);
  expect({ ...files(), c: readOrNull(file("c.txt")) }).toEqual({ a: "0", b: "s", c: null });
});
