// Process-level crashes: a real child process is SIGKILLed in the middle of a tool run and in the middle of a
// move; the parent reopens the same SQLite file with the tools registered and checks what the journal did.
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { ToolUndoError, defineTool, type Forkpoint, type RecoveryReport, type ToolInvocation } from "../../src/index.js";
import {
  blockTool,
  flakyWriteTool,
  readLog,
  readOrNull,
  tempDir,
  writeFileTool,
  type FlakyControl,
  type ToolCallRecord,
} from "../fixtures/file-tools.js";
import { ids, rows } from "../fixtures/harness.js";
import { processStart } from "../../src/sessions/core/process-identity.js";
import { rejectionOf } from "../helpers.js";
import { expireLeases, onPostgres, openForkpoint, sqlOn } from "../fixtures/backend.js";
import { nodeArgs } from "../fixtures/compiled.js";

/** A later `recover()` finds nothing to do, and lists again only the calls the move reported unknown (`first`). */
async function expectOnlyUnknownAgain(fp: Forkpoint, first: { unknown: readonly { id: string }[] }): Promise<void> {
  const later = await fp.recover();
  expect({ ...later, unknown: ids(later.unknown) }).toEqual({
    resumed: [],
    waiting: [],
    failed: [],
    unknown: ids(first.unknown),
    workspaces: [],
  });
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const USER = "carol";
const opened: Forkpoint[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const fp of opened.splice(0)) await fp.close().catch(() => undefined);
});

function open(
  dbPath: string,
  tools: ReturnType<typeof writeFileTool | typeof blockTool | typeof flakyWriteTool>[],
  recover = true,
): Forkpoint {
  const fp = openForkpoint({ path: dbPath, tools, recover });
  opened.push(fp);
  return fp;
}

async function closeAll(): Promise<void> {
  for (const fp of opened.splice(0)) await fp.close();
}

interface Child {
  proc: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
}

function startChild(script: string, args: string[]): Child {
  const proc = spawn(process.execPath, [...nodeArgs(path.join(repoRoot, "tests/fixtures", script)), ...args], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(proc);
  let out = "";
  proc.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return { proc, exited, output: () => out };
}

/** Polls until `ready()` holds; fails if the child exits first (or after a generous safety limit). */
async function waitUntil(child: Child, ready: () => boolean, what: string): Promise<void> {
  let gone = false;
  void child.exited.then(() => (gone = true));
  for (let i = 0; i < 6_000; i++) {
    if (ready()) return;
    if (gone) throw new Error(`child exited before ${what}:\n${child.output()}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`gave up waiting for ${what}:\n${child.output()}`);
}

/** Kills the child; its moves on `dbPath` are then recoverable (on PostgreSQL, its leases made to run out). */
async function kill(child: Child, dbPath: string): Promise<void> {
  child.proc.kill("SIGKILL");
  const { signal } = await child.exited; // reaped: its pid is no longer alive
  expect(signal).toBe("SIGKILL");
  await expireLeases(dbPath);
}

describe("a child killed while a tool runs", () => {
  it("leaves the invocation running; a later rollback reports it unknown and does not undo it", async () => {
    const dir = tempDir("forkpoint-crash-");
    const dbPath = path.join(dir, "forkpoint.db");
    const f = path.join(dir, "f.txt");
    const marker = path.join(dir, "block.marker");
    const calls: ToolCallRecord[] = [];
    const tools = () => [writeFileTool({ calls }), blockTool({ calls })];

    let fp = open(dbPath, tools());
    const s0 = await fp.createSession({ userId: USER });
    await s0.append({ role: "user", content: "write then block" });
    const cp0 = await s0.checkpoint({ name: "before tools" });
    await s0.invoke("write_file", { path: f, text: "F" });
    const root = (await s0.info()).currentBranchId;
    await closeAll();

    const child = startChild("crash-invoke.ts", [dbPath, s0.id, USER, marker]);
    await waitUntil(child, () => fs.existsSync(marker), "the tool started");
    await kill(child, dbPath);
    const childPid = readOrNull(marker);

    fp = open(dbPath, tools());
    await fp.ready;
    const s = await fp.getSession(s0.id, { userId: USER });
    const track = await s.toolTrack();
    expect(track.map((t) => [t.tool, t.status, t.applied])).toEqual([
      ["write_file", "succeeded", true],
      ["block", "running", false],
    ]);
    // An explicit recover() lists the call the crash left running: its outcome is unknown.
    expect((await fp.recover()).unknown.map((t) => [t.tool, t.id])).toEqual([["block", track[1]!.id]]);
    const [write, block] = track as [ToolInvocation, ToolInvocation];
    expect(block.completedAt).toBeNull();
    expect(block.result).toBeNull();
    expect(block.args).toEqual({ marker });

    const plan = await s.plan({ checkpointId: cp0.id });
    expect(ids(plan.undone)).toEqual([write.id]);
    expect(ids(plan.unknown)).toEqual([block.id]);

    const moved = await s.rollback(cp0.id);
    expect(ids(moved.undone)).toEqual([write.id]);
    expect(ids(moved.unknown)).toEqual([block.id]);
    expect(ids(moved.replayed)).toEqual([]);
    expect(readOrNull(f)).toBeNull();
    expect(fs.existsSync(`${marker}.undone`)).toBe(false);

    // going back does not replay it either (it is still reported unknown)
    const back = await s.switchBranch(root);
    expect(ids(back.replayed)).toEqual([write.id]);
    expect(ids(back.unknown)).toEqual([block.id]);
    expect(readOrNull(f)).toBe("F");
    expect(calls.filter((c) => c.tool === "block")).toEqual([]);
    expect(readOrNull(marker)).toBe(childPid); // never run again
    expect((await s.toolTrack())[1]!.status).toBe("running"); // and its record never changed
  });
});

const N = 30;

interface Setup {
  dir: string;
  dbPath: string;
  logFile: string;
  files: string[];
  original: (string | null)[];
  sessionId: string;
  root: string;
  cp0: string;
  track: ToolInvocation[];
}

/** N write_file calls over N files (half of which existed before), after a checkpoint. */
async function setUpManyWrites(): Promise<Setup> {
  const dir = tempDir("forkpoint-crash-");
  const dbPath = path.join(dir, "forkpoint.db");
  const logFile = path.join(dir, "calls.jsonl");
  const files = Array.from({ length: N }, (_, i) => path.join(dir, `f${String(i).padStart(2, "0")}.txt`));
  const original = files.map((_, i) => (i % 2 === 0 ? `original ${i}` : null));
  files.forEach((file, i) => {
    if (original[i] !== null) fs.writeFileSync(file, original[i]!);
  });
  const fp = open(dbPath, [writeFileTool({ logFile }), blockTool()]);
  const s = await fp.createSession({ userId: USER });
  await s.append({ role: "user", content: "write thirty files" });
  const cp0 = await s.checkpoint({ name: "before" });
  for (let i = 0; i < N; i++) await s.invoke("write_file", { path: files[i]!, text: `new ${i}` });
  const track = await s.toolTrack();
  const root = (await s.info()).currentBranchId;
  await closeAll();
  return { dir, dbPath, logFile, files, original, sessionId: s.id, root, cp0: cp0.id, track };
}

const undoLines = (logFile: string): ToolCallRecord[] => readLog(logFile).filter((c) => c.op === "undo");

/** Starts the rollback in a child, kills it once `killAfter` undos are logged, and checks the move was interrupted. */
async function killMidRollback(setup: Setup, killAfter: number): Promise<{ childPid: number }> {
  const args = [setup.dbPath, setup.sessionId, USER, "rollback", setup.cp0, setup.logFile, "40", String(killAfter)];
  const child = startChild("crash-rollback.ts", args);
  await waitUntil(child, () => undoLines(setup.logFile).length >= killAfter, `${killAfter} undos`);
  await kill(child, setup.dbPath);
  const moves = await rows<{ status: string; pid: number }>(setup.dbPath, "SELECT status, pid FROM moves");
  expect(moves).toEqual([{ status: "running", pid: child.proc.pid }]);
  expect(undoLines(setup.logFile).length).toBeLessThan(N + 1);
  return { childPid: child.proc.pid! };
}

/** Reopens with the tools registered and returns the recovery report, from `open` (event) or an explicit `recover()`. */
async function reopenAndRecover(setup: Setup, mode: "open" | "explicit"): Promise<{ fp: Forkpoint; report: RecoveryReport }> {
  const tools = [writeFileTool({ logFile: setup.logFile }), blockTool()];
  if (mode === "explicit") {
    const fp = open(setup.dbPath, tools, false);
    return { fp, report: await fp.recover() };
  }
  const fp = open(setup.dbPath, tools);
  let report: RecoveryReport = { resumed: [], waiting: [], failed: [], unknown: [], workspaces: [] };
  fp.on("recovery", (r: RecoveryReport) => (report = r));
  await fp.ready;
  return { fp, report };
}

describe("a child killed in the middle of a rollback", () => {
  for (const { killAfter, mode } of [
    { killAfter: 1, mode: "open" as const },
    { killAfter: 12, mode: "explicit" as const },
    { killAfter: N, mode: "open" as const },
  ]) {
    it(`finishes the move exactly once after reopening (killed after ${killAfter} undo(s), recovery on ${mode})`, async () => {
      const setup = await setUpManyWrites();
      const all = ids(setup.track);
      const { childPid } = await killMidRollback(setup, killAfter);
      const byChild = undoLines(setup.logFile);

      const { fp, report } = await reopenAndRecover(setup, mode);
      expect(report.waiting).toEqual([]);
      expect(report.failed).toEqual([]);
      expect(report.resumed).toHaveLength(1);
      const result = report.resumed[0]!;

      // every invocation is undone (by the child or now) or reported unknown: at most one, the step running at the kill
      expect(result.unknown.length).toBeLessThanOrEqual(1);
      expect([...ids(result.undone), ...ids(result.unknown)].sort()).toEqual([...all].sort());
      expect(ids(result.undone)).toEqual(all.filter((id) => !ids(result.unknown).includes(id)).reverse());
      expect(result.replayed).toEqual([]);
      expect(result.failed).toEqual([]);

      // the log: each undone invocation undone exactly once; the unknown one never re-run by the parent
      const log = undoLines(setup.logFile);
      const count = (id: string) => log.filter((c) => c.invocationId === id).length;
      for (const id of ids(result.undone)) expect(count(id), `undo count of ${id}`).toBe(1);
      for (const inv of result.unknown) {
        expect(count(inv.id)).toBeLessThanOrEqual(1);
        expect(log.filter((c) => c.invocationId === inv.id && c.pid !== childPid)).toEqual([]);
      }
      expect(log.slice(0, byChild.length)).toEqual(byChild);
      expect(log.slice(byChild.length).every((c) => c.pid === process.pid)).toBe(true);
      expect(byChild.length).toBeGreaterThanOrEqual(killAfter);

      // the files are where the target position says (the unknown step's file may be either way)
      const unknownIds = new Set(ids(result.unknown));
      setup.track.forEach((inv, i) => {
        if (!unknownIds.has(inv.id)) expect(readOrNull(setup.files[i]!), setup.files[i]).toBe(setup.original[i]);
      });

      // the new branch exists once and is current
      const s = await fp.getSession(setup.sessionId, { userId: USER });
      const branches = await s.branches();
      expect(branches).toHaveLength(2);
      const info = await s.info();
      expect(info.currentBranchId).toBe(result.branch.id);
      expect(result.branch).toMatchObject({ parentId: setup.root, forkCheckpointId: setup.cp0 });
      expect(await s.toolTrack()).toEqual([]);
      expect(await rows<{ status: string }>(setup.dbPath, "SELECT status FROM moves")).toEqual([{ status: "done" }]);
      await closeAll();

      // reopening again does nothing more
      const again = open(setup.dbPath, [writeFileTool({ logFile: setup.logFile }), blockTool()]);
      let recoveredAgain = false;
      again.on("recovery", () => {
        recoveredAgain = true;
      });
      await again.ready;
      expect(recoveredAgain).toBe(false);
      await expectOnlyUnknownAgain(again, result);
      expect(undoLines(setup.logFile)).toEqual(log);
      const s2 = await again.getSession(setup.sessionId, { userId: USER });
      expect((await s2.branches()).map((b) => b.id)).toEqual(branches.map((b) => b.id));
      expect((await s2.info()).currentBranchId).toBe(result.branch.id);
    });
  }

  it("is finished once when two handles recover it at the same time, then recover() again on both", async () => {
    const setup = await setUpManyWrites();
    await killMidRollback(setup, 2);
    const tools = () => [writeFileTool({ logFile: setup.logFile }), blockTool()];
    const [a, b] = [open(setup.dbPath, tools()), open(setup.dbPath, tools())];
    const reports: RecoveryReport[] = [];
    for (const fp of [a, b]) fp.on("recovery", (r: RecoveryReport) => void reports.push(r));
    await Promise.all([a.ready, b.ready]);
    reports.push(...(await Promise.all([a.recover(), b.recover()])));
    expect(reports.flatMap((r) => r.failed)).toEqual([]);
    // Finished by one of them: a recovery meeting it under way in this process waits and reports the same move.
    const resumed = reports.flatMap((r) => r.resumed);
    expect(resumed.length).toBeGreaterThanOrEqual(1);
    expect(new Set(resumed.map((r) => r.branch.id)).size).toBe(1);
    // One that found it taken says so (or, reading after it was done, found nothing to do).
    for (const r of reports) if (r.resumed.length === 0) expect(r.waiting.every((w) => /another recoverer/.test(w.reason))).toBe(true);
    // each invocation undone at most once, by the child or by the one recoverer
    const log = undoLines(setup.logFile);
    expect(new Set(log.map((c) => c.invocationId)).size).toBe(log.length);
    const s = await a.getSession(setup.sessionId, { userId: USER });
    expect(await s.branches()).toHaveLength(2);
    expect(await rows<{ status: string }>(setup.dbPath, "SELECT status FROM moves")).toEqual([{ status: "done" }]);
    expect(await a.verify()).toMatchObject({ ok: true });
  });

  it("a plan made while the move runs in another process says the move is refused for it, then not once it is killed", async () => {
    const setup = await setUpManyWrites();
    const child = startChild("crash-rollback.ts", [setup.dbPath, setup.sessionId, USER, "rollback", setup.cp0, setup.logFile, "40", "3"]);
    await waitUntil(child, () => undoLines(setup.logFile).length >= 3, "3 undos");
    const peer = open(setup.dbPath, [writeFileTool({ logFile: setup.logFile }), blockTool()], false);
    const s = await peer.getSession(setup.sessionId, { userId: USER });
    const during = await s.plan({ branchId: setup.root });
    expect(during.blocked).toContain("MOVE_IN_PROGRESS");
    expect(during.blocked).toContain(`process ${child.proc.pid}`);
    await kill(child, setup.dbPath);
    // Its owner gone, the move runs nowhere: the next move finishes it first and goes on, so nothing blocks it; the plan
    // finishes it too, and is of the switch back from where the rollback lands (its undone calls replayed), not a stay.
    const after = await s.plan({ branchId: setup.root });
    expect(after.blocked).toBeUndefined();
    expect((await s.info()).currentBranchId).not.toBe(setup.root);
    expect(after.replayed.length).toBeGreaterThan(0);
  });

  it("waits while the moving process lives or a tool is missing, and resumes once reopened with the tools", async () => {
    const setup = await setUpManyWrites();
    const child = startChild("crash-rollback.ts", [setup.dbPath, setup.sessionId, USER, "rollback", setup.cp0, setup.logFile, "40", "3"]);
    await waitUntil(child, () => undoLines(setup.logFile).length >= 3, "3 undos");
    // another process looks while the move is under way: it must not touch it
    const peer = open(setup.dbPath, [writeFileTool({ logFile: setup.logFile }), blockTool()], false);
    const whileAlive = await peer.recover();
    expect(whileAlive.resumed).toEqual([]);
    expect(whileAlive.waiting).toHaveLength(1);
    expect(whileAlive.waiting[0]!.reason).toContain(String(child.proc.pid));
    await closeAll();
    await kill(child, setup.dbPath);
    const byChild = undoLines(setup.logFile);

    // reopened without the tools: nothing can be resumed, nothing is touched
    const bare = open(setup.dbPath, []);
    await bare.ready;
    const noTools = await bare.recover();
    expect(noTools.resumed).toEqual([]);
    expect(noTools.waiting).toHaveLength(1);
    expect(noTools.waiting[0]!.reason).toContain("write_file");
    expect(await rows<{ status: string }>(setup.dbPath, "SELECT status FROM moves")).toEqual([{ status: "running" }]);
    const s0 = await bare.getSession(setup.sessionId, { userId: USER });
    expect((await s0.info()).currentBranchId).toBe(setup.root);
    await closeAll();
    expect(undoLines(setup.logFile)).toEqual(byChild);

    // reopened with the tools: resumed once
    const { report } = await reopenAndRecover(setup, "open");
    expect(report.resumed).toHaveLength(1);
    const result = report.resumed[0]!;
    expect([...ids(result.undone), ...ids(result.unknown)].sort()).toEqual(ids(setup.track).sort());
    const log = undoLines(setup.logFile);
    for (const id of ids(result.undone)) expect(log.filter((c) => c.invocationId === id)).toHaveLength(1);
  });

  // After a crash the dead process's pid may be handed to an unrelated process: where /proc tells process start times
  // apart, that process is not taken for the mover, and the move is resumed rather than left waiting forever.
  // On PostgreSQL a move's owner is a lease, not a process: nothing to tell apart (tests/postgres/server-crash.test.ts).
  it.skipIf(processStart(process.pid) === null || onPostgres)(
    "resumes a move whose pid now belongs to another process (pid reuse)",
    async () => {
      const setup = await setUpManyWrites();
      const { childPid } = await killMidRollback(setup, 2);
      const recorded = (await rows<{ pid_start: string }>(setup.dbPath, "SELECT pid_start FROM moves"))[0]!.pid_start;
      expect(recorded).toMatch(/^[0-9a-f-]+:\d+#\d+$/);
      expect(recorded).not.toBe(processStart(process.pid));
      const sleeper = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"], { stdio: "ignore" });
      children.push(sleeper);
      await new Promise((r) => sleeper.once("spawn", r));
      const reuse = (start: string) => sqlOn(setup.dbPath, "UPDATE moves SET pid = $1, pid_start = $2", [sleeper.pid, start]);

      // The control: the journal names the live sleeper itself, so the move waits for it.
      await reuse(processStart(sleeper.pid!)!);
      const waiting = await open(setup.dbPath, [writeFileTool({ logFile: setup.logFile }), blockTool()], false).recover();
      expect([waiting.resumed.length, waiting.waiting.length]).toEqual([0, 1]);
      await closeAll();

      // The dead child's identity under the sleeper's pid: a reused pid, so the move is resumed.
      await reuse(recorded);
      const { report } = await reopenAndRecover(setup, "explicit");
      expect([report.resumed.length, report.waiting.length]).toEqual([1, 0]);
      expect(childPid).not.toBe(sleeper.pid);
    },
  );

  // Design: a step running at the crash "is reported as unknown, never repeated silently" (nothing compensated twice).
  // The kill lands while the 5th undo sleeps after restoring its file, so that step is `running` and its effect happened.
  it("the step running at the kill (unknown) is not compensated again by a later move", async () => {
    const setup = await setUpManyWrites();
    await killMidRollback(setup, 5);
    const { fp, report } = await reopenAndRecover(setup, "explicit");
    const result = report.resumed[0]!;
    // killed while the 5th undo slept after doing its work: that step was running
    expect(ids(result.unknown)).toHaveLength(1);
    const unknownId = result.unknown[0]!.id;
    const countOf = () => undoLines(setup.logFile).filter((c) => c.invocationId === unknownId).length;
    const before = countOf();
    expect(before).toBeLessThanOrEqual(1);

    // the world is at the checkpoint: moving to the same checkpoint again must not undo it a second time
    const s = await fp.getSession(setup.sessionId, { userId: USER });
    const plan = await s.plan({ checkpointId: setup.cp0 });
    expect(ids(plan.undone)).not.toContain(unknownId);
    const moved = await s.rollback(setup.cp0);
    expect(ids(moved.undone)).not.toContain(unknownId);
    expect(countOf()).toBe(before);
  });
});

/** write_file whose undo now throws: a resumed move stops on the first undo it runs. */
function undoRefusingWriteTool() {
  return defineTool<{ path: string; text: string }, { previous: string | null }>({
    name: "write_file",
    run: () => {
      throw new Error("not run here");
    },
    undo: () => {
      throw new Error("this undo fails now");
    },
  });
}

describe("a child killed in the middle of an undo, the move then stopping on the next one", () => {
  /** Kills the rollback while its 5th undo runs; the step the journal then marks unknown is that undo's. */
  async function killed(): Promise<{ setup: Setup; running: string }> {
    const setup = await setUpManyWrites();
    await killMidRollback(setup, 5);
    const running = await rows<{ entry_id: string }>(setup.dbPath, "SELECT entry_id FROM move_steps WHERE status = 'running'");
    expect(running).toHaveLength(1);
    return { setup, running: running[0]!.entry_id };
  }

  it("recover() reports the step it marked unknown, in its report and in the error it stops with", async () => {
    const { setup, running } = await killed();
    const fp = open(setup.dbPath, [undoRefusingWriteTool(), blockTool()], false);
    const report = await fp.recover();
    expect(report.resumed).toEqual([]);
    expect(report.failed).toHaveLength(1);
    const error = report.failed[0]!.error as ToolUndoError;
    expect(error).toBeInstanceOf(ToolUndoError);
    expect(ids(error.unknown as ToolInvocation[])).toEqual([running]);
    expect(ids(report.unknown)).toEqual([running]);
    // The next recover() lists it again, until it is resolved.
    expect(ids((await fp.recover()).unknown)).toEqual([running]);
  });

  it("a rollback of another process resuming it stops with an error listing that step", async () => {
    const { setup, running } = await killed();
    const fp = open(setup.dbPath, [undoRefusingWriteTool(), blockTool()], false);
    const s = await fp.getSession(setup.sessionId, { userId: USER });
    const error = await rejectionOf(s.rollback(setup.cp0));
    expect(error).toBeInstanceOf(ToolUndoError);
    expect(ids((error as ToolUndoError).unknown as ToolInvocation[])).toEqual([running]);
  });

  it("a switch of another process that resumes it and then moves reports that step with its own", async () => {
    const { setup, running } = await killed();
    const fp = open(setup.dbPath, [writeFileTool({ logFile: setup.logFile }), blockTool()], false);
    const s = await fp.getSession(setup.sessionId, { userId: USER });
    // Resumed first (the rollback to cp0 finishes), then the switch back replays all but the unknown call.
    const moved = await s.switchBranch(setup.root);
    expect(ids(moved.unknown)).toEqual([running]);
    expect(ids(moved.replayed)).not.toContain(running);
  });

  it("the same switch made again by another process, resuming the killed one, reports the step unknown", async () => {
    const setup = await setUpManyWrites();
    let fp = open(setup.dbPath, [writeFileTool({ logFile: setup.logFile }), blockTool()]);
    expect((await (await fp.getSession(setup.sessionId, { userId: USER })).rollback(setup.cp0)).undone).toHaveLength(N);
    await closeAll();
    const replays = () => readLog(setup.logFile).filter((c) => c.op === "run" && c.replay);
    const child = startChild("crash-rollback.ts", [setup.dbPath, setup.sessionId, USER, "switch", setup.root, setup.logFile, "40", "5"]);
    await waitUntil(child, () => replays().length >= 5, "5 replays");
    await kill(child, setup.dbPath);
    const running = await rows<{ entry_id: string }>(setup.dbPath, "SELECT entry_id FROM move_steps WHERE status = 'running'");
    expect(running).toHaveLength(1);
    fp = open(setup.dbPath, [writeFileTool({ logFile: setup.logFile }), blockTool()], false);
    const s = await fp.getSession(setup.sessionId, { userId: USER });
    // The killed switch is finished first: the switch made again then finds the session there already.
    const moved = await s.switchBranch(setup.root);
    expect(moved.branch.id).toBe(setup.root);
    expect(ids(moved.unknown)).toEqual([running[0]!.entry_id]);
  });
});

describe("a child killed in the middle of a switch that replays", () => {
  it("resumes the replays exactly once and leaves the files at the target branch's head", async () => {
    const setup = await setUpManyWrites();
    // move away first (in this process): everything undone, the world at the checkpoint on a new branch
    let fp = open(setup.dbPath, [writeFileTool({ logFile: setup.logFile }), blockTool()]);
    let s = await fp.getSession(setup.sessionId, { userId: USER });
    const away = await s.rollback(setup.cp0);
    expect(away.undone).toHaveLength(N);
    await closeAll();
    const replays = () => readLog(setup.logFile).filter((c) => c.op === "run" && c.replay);

    const child = startChild("crash-rollback.ts", [setup.dbPath, setup.sessionId, USER, "switch", setup.root, setup.logFile, "40", "10"]);
    await waitUntil(child, () => replays().length >= 10, "10 replays");
    await kill(child, setup.dbPath);
    expect((await rows<{ status: string }>(setup.dbPath, "SELECT status FROM moves ORDER BY seq")).map((m) => m.status)).toEqual([
      "done",
      "running",
    ]);

    const recovered = await reopenAndRecover(setup, "open");
    fp = recovered.fp;
    expect(recovered.report.resumed).toHaveLength(1);
    const result = recovered.report.resumed[0]!;
    const all = ids(setup.track);
    expect(result.unknown.length).toBeLessThanOrEqual(1);
    expect([...ids(result.replayed), ...ids(result.unknown)].sort()).toEqual([...all].sort());
    expect(ids(result.replayed)).toEqual(all.filter((id) => !ids(result.unknown).includes(id)));
    expect(result.undone).toEqual([]);

    const log = replays();
    for (const id of ids(result.replayed))
      expect(
        log.filter((c) => c.invocationId === id),
        id,
      ).toHaveLength(1);
    for (const id of ids(result.unknown)) expect(log.filter((c) => c.invocationId === id && c.pid === process.pid)).toEqual([]);
    const unknownIds = new Set(ids(result.unknown));
    setup.track.forEach((inv, i) => {
      if (!unknownIds.has(inv.id)) expect(readOrNull(setup.files[i]!), setup.files[i]).toBe(`new ${i}`);
    });

    s = await fp.getSession(setup.sessionId, { userId: USER });
    expect((await s.info()).currentBranchId).toBe(setup.root);
    expect(result.branch.id).toBe(setup.root);
    expect(await s.branches()).toHaveLength(2);
    const track = await s.toolTrack();
    expect(track.filter((t) => !unknownIds.has(t.id)).every((t) => t.applied)).toBe(true);
    await closeAll();

    const again = open(setup.dbPath, [writeFileTool({ logFile: setup.logFile }), blockTool()]);
    await again.ready;
    await expectOnlyUnknownAgain(again, result);
    expect(replays()).toEqual(log);
  });
});

describe("a crash between a failed step and the stop it causes", () => {
  // The failed step and the move's stop are two writes: a process dying between them leaves the move running with a
  // failed step. Under "stop" the move must stay stopped: resuming it past that step would finish a move whose undo
  // failed (a new current branch whose world still holds the call's effect).
  it("recovery stops the move again instead of finishing it past the failed step", async () => {
    const dir = tempDir("forkpoint-crash-");
    const dbPath = path.join(dir, "forkpoint.db");
    const [a, b] = [path.join(dir, "a.txt"), path.join(dir, "b.txt")];
    const control: FlakyControl = {};
    const first = open(dbPath, [writeFileTool(), flakyWriteTool({ control })]);
    const s = await first.createSession({ userId: USER });
    const cp0 = await s.checkpoint();
    await s.invoke("flaky_write", { path: a, text: "A" });
    await s.invoke("write_file", { path: b, text: "B" });
    const root = (await s.info()).currentBranchId;
    control.failUndo = true;
    expect(await rejectionOf(s.rollback(cp0.id))).toBeInstanceOf(ToolUndoError);
    await closeAll();
    // As the journal stands when the process died after recording the failed step: the move still running, owned by
    // a thread that is gone (this one, with nothing in flight).
    await sqlOn(dbPath, `UPDATE moves SET status = 'running', finished_at = NULL, pid = $1, pid_start = NULL`, [process.pid]);
    await expireLeases(dbPath);

    const fp = open(dbPath, [writeFileTool(), flakyWriteTool({ control })], false);
    const report = await fp.recover();
    expect(report.resumed).toEqual([]);
    expect(report.failed).toHaveLength(1);
    expect(report.failed[0]!.error).toBeInstanceOf(ToolUndoError);
    expect(await rows(dbPath, `SELECT status FROM moves`)).toEqual([{ status: "failed" }]);
    const again = await fp.getSession(s.id, { userId: USER });
    expect((await again.info()).currentBranchId).toBe(root);
    expect([readOrNull(a), readOrNull(b)]).toEqual(["A", null]);
    // Calling the move again continues from there once the undo works.
    control.failUndo = false;
    const moved = await again.rollback(cp0.id);
    expect(moved.undone.map((t) => t.tool)).toEqual(["flaky_write"]);
    expect(readOrNull(a)).toBeNull();
  });
});
