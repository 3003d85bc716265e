// A move that undoes a later call first and replays it on top (issue 32), killed between that undo and that replay in
// a real child process: reopened, the move finishes exactly once. Killed after the undo finished, the replay runs once;
// killed while that undo ran (its outcome unknown), its replay is never run, and the call is reported unknown until
// resolved, when the next move replays it once.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint, RecoveryReport } from "../../src/index.js";
import { appendLineTool, flakyWriteTool, readLog, readOrNull, type FlakyControl } from "../fixtures/file-tools.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { expireLeases, openForkpoint } from "../fixtures/backend.js";
import { startWorker } from "../fixtures/workers.js";

let dir: string;
let dbPath: string;
let logFile: string;
const control: FlakyControl = {};
const opened: Forkpoint[] = [];
const file = (rel: string) => path.join(dir, rel);
const idsOf = (list: readonly { id: string }[]) => list.map((t) => t.id);

beforeEach(() => {
  dir = makeTempDir("forkpoint-later-call-crash-");
  dbPath = path.join(dir, "forkpoint.db");
  logFile = path.join(dir, "calls.log");
  control.failRun = false;
});
afterEach(async () => {
  for (const fp of opened.splice(0)) await fp.close();
  removeDir(dir);
});

function open(recover = true): Forkpoint {
  const fp = openForkpoint({ path: dbPath, tools: [appendLineTool({ logFile }), flakyWriteTool({ logFile, control })], recover });
  opened.push(fp);
  return fp;
}

/** Another branch's append Lx left applied by a stopped switch, then Ly appended on the current branch after it. */
async function setUp() {
  const fp = open();
  const s = await fp.createSession({ userId: "u" });
  const start = await s.checkpoint({ name: "start" });
  const root = (await s.info()).currentBranchId;
  await s.invoke("append_line", { path: file("log"), line: "Lx" });
  await s.invoke("flaky_write", { path: file("c"), text: "g" });
  await s.rollback(start.id);
  const other = (await s.info()).currentBranchId;
  control.failRun = true;
  expect((await rejectionOf(s.switchBranch(root))).code).toBe("REPLAY_FAILED");
  control.failRun = false;
  await s.invoke("append_line", { path: file("log"), line: "Ly" });
  const lx = (await s.toolTrack({ branchId: root }))[0]!.id;
  const ly = (await s.toolTrack())[0]!.id;
  expect(readOrNull(file("log"))).toBe("Lx\nLy\n");
  for (const handle of opened.splice(0)) await handle.close();
  // What the child and the recovery do, alone.
  fs.rmSync(logFile);
  return { sessionId: s.id, other, lx, ly };
}

const undos = () => readLog(logFile).filter((c) => c.op === "undo" && c.tool === "append_line");
const count = (op: "undo" | "run", id: string) =>
  readLog(logFile).filter((c) => c.op === op && c.invocationId === id && (op === "undo" || c.replay)).length;

/** Runs the switch to `other` in a child held in its undo numbered `undone`, kills it there, reopens and recovers. */
async function killAfterUndos(setup: Awaited<ReturnType<typeof setUp>>, undone: number) {
  const worker = startWorker("tests/fixtures/crash-later-call.ts", [dbPath, setup.sessionId, "u", setup.other, logFile, String(undone)]);
  for (let i = 0; i < 6_000 && undos().length < undone; i++) await new Promise((r) => setTimeout(r, 5));
  expect(undos().length).toBe(undone);
  worker.child.kill("SIGKILL");
  await worker.done;
  await expireLeases(dbPath);
  const fp = open();
  let report: RecoveryReport | undefined;
  fp.on("recovery", (r: RecoveryReport) => (report = r));
  await fp.ready;
  expect(report?.resumed).toHaveLength(1);
  return { fp, result: report!.resumed[0]! };
}

it("killed after the later call's undo, the move resumes: the older undo is unknown, the replay runs once", async () => {
  const setup = await setUp();
  const { fp, result } = await killAfterUndos(setup, 2);

  expect([idsOf(result.undone), idsOf(result.unknown), idsOf(result.replayed)]).toEqual([[setup.ly], [setup.lx], [setup.ly]]);
  expect([count("undo", setup.ly), count("undo", setup.lx), count("run", setup.ly)]).toEqual([1, 1, 1]);
  expect(readOrNull(file("log"))).toBe("Ly\n");
  const s = await fp.getSession(setup.sessionId, { userId: "u" });
  expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true]);
});

it("killed while the later call's undo ran, its replay is never run; resolved, the next move replays it once", async () => {
  const setup = await setUp();
  const { fp, result } = await killAfterUndos(setup, 1);

  expect([idsOf(result.undone), idsOf(result.unknown), idsOf(result.replayed)]).toEqual([[setup.lx], [setup.ly], []]);
  expect([count("undo", setup.ly), count("undo", setup.lx), count("run", setup.ly)]).toEqual([1, 1, 0]);
  expect(readOrNull(file("log"))).toBe("");
  const s = await fp.getSession(setup.sessionId, { userId: "u" });
  // The older call's undo ran once, in the recovery, recorded: nothing of it is left to resolve.
  expect((await rejectionOf(s.resolveToolCall(setup.lx, { status: "succeeded", result: null }))).code).toBe("CALL_NOT_UNKNOWN");

  await s.resolveToolCall(setup.ly, { status: "succeeded", result: null });
  const moved = await s.switchBranch(setup.other);
  expect([idsOf(moved.undone), idsOf(moved.replayed)]).toEqual([[], [setup.ly]]);
  expect(count("run", setup.ly)).toBe(1);
  expect(readOrNull(file("log"))).toBe("Ly\n");
});
