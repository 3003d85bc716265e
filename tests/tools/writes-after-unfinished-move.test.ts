// A write on the current branch while a move of the session is unfinished (its process killed midway, or still
// running elsewhere) lands after that move, on the branch it makes current, never on the branch the move is leaving.
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { ConflictError, type Forkpoint, type SessionHandle as Session } from "../../src/index.js";
import { expireLeases, openForkpoint, sqlOn } from "../fixtures/backend.js";
import { nodeArgs } from "../fixtures/compiled.js";
import { blockTool, readLog, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { ForkpointSession } from "../../src/openai-agents/index.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const USER = "dana";
const N = 12;
const opened: Forkpoint[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const fp of opened.splice(0)) await fp.close().catch(() => undefined);
});

function open(dbPath: string, logFile: string | null, o: { busyTimeoutMs?: number } = {}): Forkpoint {
  const tools = logFile === null ? [] : [writeFileTool({ logFile }), blockTool()];
  const fp = openForkpoint({ path: dbPath, tools, recover: false, ...o });
  opened.push(fp);
  return fp;
}

interface Setup {
  dbPath: string;
  logFile: string;
  files: string[];
  sessionId: string;
  root: string;
  cp0: string;
}

/** A message, a checkpoint, then N write_file calls over new files (and a message after them: `later`). */
async function setUp(later?: string): Promise<Setup> {
  const dir = tempDir("forkpoint-after-move-");
  const dbPath = path.join(dir, "forkpoint.db");
  const logFile = path.join(dir, "calls.jsonl");
  const files = Array.from({ length: N }, (_, i) => path.join(dir, `f${i}.txt`));
  const fp = open(dbPath, logFile);
  const s = await fp.createSession({ userId: USER });
  await s.append({ role: "user", content: "write the files" });
  const cp0 = await s.checkpoint({ name: "before" });
  for (const file of files) await s.invoke("write_file", { path: file, text: "new" });
  if (later !== undefined) await s.append({ role: "assistant", content: later });
  const root = (await s.info()).currentBranchId;
  await fp.close();
  opened.splice(opened.indexOf(fp), 1);
  return { dbPath, logFile, files, sessionId: s.id, root, cp0: cp0.id };
}

const undos = (logFile: string) => readLog(logFile).filter((c) => c.op === "undo").length;

/** A child rolling the session back to `cp0`, each undo taking `delayMs`; resolves once it has undone `after`. With
 * `hold`, its undo numbered `after` never returns (the move stays under way until the child is killed). */
async function rollbackInChild(setup: Setup, after: number, delayMs: number, hold = false) {
  const script = path.join(repoRoot, "tests/fixtures/crash-rollback.ts");
  const args = [setup.dbPath, setup.sessionId, USER, "rollback", setup.cp0, setup.logFile, String(delayMs)];
  if (hold) args.push(String(after));
  const proc = spawn(process.execPath, [...nodeArgs(script), ...args], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
  children.push(proc);
  let out = "";
  proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
  for (let i = 0; undos(setup.logFile) < after; i++) {
    if (proc.exitCode !== null || i > 12_000) throw new Error(`the child did not undo ${after} calls:\n${out}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return { proc, exited, output: () => out };
}

/** Kills the child midway: its move stays journaled, unfinished, its owner gone. */
async function killedMidway(setup: Setup): Promise<void> {
  const child = await rollbackInChild(setup, 3, 60, true);
  child.proc.kill("SIGKILL");
  await child.exited;
  await expireLeases(setup.dbPath);
  expect(await sqlOn<{ status: string }>(setup.dbPath, "SELECT status FROM moves")).toEqual([{ status: "running" }]);
}

/** Where the session stands: its current branch, its messages' contents, and how many files the rollback undid. */
async function standing(s: Session, setup: Setup) {
  const { currentBranchId } = await s.info();
  return {
    onRoot: currentBranchId === setup.root,
    contents: (await s.history()).map((m) => m.content),
    filesLeft: setup.files.filter((f) => fs.existsSync(f)).length,
  };
}

const writes: Record<string, (s: Session) => Promise<string>> = {
  append: async (s) => (await s.append({ role: "user", content: "after" }))[0]!.branchId,
  turn: async (s) => (await s.turn([{ role: "user", content: "after" }], { name: "t" })).checkpoint.branchId,
  setState: async (s) => {
    await s.setState({ after: true });
    return (await s.info()).currentBranchId;
  },
};

describe("a write while a killed process's move is unfinished", () => {
  for (const [verb, write] of Object.entries(writes)) {
    it(`${verb} finishes the move first, then lands on the branch it made current`, async () => {
      const setup = await setUp();
      await killedMidway(setup);
      const fp = open(setup.dbPath, setup.logFile);
      const s = await fp.getSession(setup.sessionId, { userId: USER });
      const branchId = await write(s);
      expect(branchId).not.toBe(setup.root);
      const now = await standing(s, setup);
      expect(now.onRoot).toBe(false);
      expect(now.filesLeft).toBe(0);
      expect(now.contents).toEqual(verb === "setState" ? ["write the files"] : ["write the files", "after"]);
      if (verb === "setState") expect(await s.getState()).toEqual({ after: true });
      expect(await sqlOn<{ status: string }>(setup.dbPath, "SELECT status FROM moves")).toEqual([{ status: "done" }]);
      // Every call was undone once: the child's and the resumed move's undos together.
      expect(undos(setup.logFile)).toBe(N);
    });
  }

  it("is refused TOOL_NOT_REGISTERED, nothing written, when the move cannot be finished here (its tools not registered)", async () => {
    const setup = await setUp();
    await killedMidway(setup);
    const fp = open(setup.dbPath, null);
    const s = await fp.getSession(setup.sessionId, { userId: USER });
    const entries = () => sqlOn<{ id: string }>(setup.dbPath, "SELECT id FROM entries ORDER BY id");
    const before = await entries();
    const error = await s.append({ role: "user", content: "after" }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as ConflictError).code).toBe("TOOL_NOT_REGISTERED");
    expect((error as ConflictError).message).toContain("write_file");
    expect(await entries()).toEqual(before);
    expect((await standing(s, setup)).onRoot).toBe(true);
  });
});

describe("a tool call made right after a write, not awaited, while a killed process's move is unfinished", () => {
  it("goes after the write: the write finishes the move and lands, then the call runs, both on the new branch", async () => {
    const setup = await setUp();
    await killedMidway(setup);
    const fp = open(setup.dbPath, setup.logFile);
    const s = await fp.getSession(setup.sessionId, { userId: USER });
    const written = s.append({ role: "user", content: "after" });
    const invoked = s.invoke("write_file", { path: `${setup.files[0]}.next`, text: "next" });
    const [[message]] = await Promise.all([written, invoked]);
    const call = (await s.toolTrack()).at(-1)!;
    expect(message!.branchId).not.toBe(setup.root);
    expect([call.branchId, call.position]).toEqual([message!.branchId, message!.position + 1]);
    expect(undos(setup.logFile)).toBe(N);
  });
});

/** A child writer of the session: resolves once it is open; `go()` makes it append `content` and tells what it got. */
async function writerChild(setup: Setup, content: string) {
  const script = path.join(repoRoot, "tests/fixtures/append-after-move.ts");
  const args = [setup.dbPath, setup.sessionId, USER, setup.logFile, content];
  const proc = spawn(process.execPath, [...nodeArgs(script), ...args], { cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] });
  children.push(proc);
  let out = "";
  proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => proc.on("exit", () => resolve()));
  while (!out.includes("ready\n")) {
    if (proc.exitCode !== null) throw new Error(`the writer exited:\n${out}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return {
    go: async () => {
      proc.stdin.end("go\n");
      await exited;
      return JSON.parse(out.split("\n").find((l) => l.startsWith("{")) ?? `{"out":${JSON.stringify(out)}}`) as {
        branchId?: string;
        code?: string;
      };
    },
  };
}

describe("two processes writing at once after the move was killed", () => {
  it("both land on the branch it made current, the move finished once", async () => {
    const setup = await setUp();
    await killedMidway(setup);
    const [a, b] = await Promise.all([writerChild(setup, "A"), writerChild(setup, "B")]);
    const [gotA, gotB] = await Promise.all([a.go(), b.go()]);
    const fp = open(setup.dbPath, setup.logFile);
    const s = await fp.getSession(setup.sessionId, { userId: USER });
    const { currentBranchId } = await s.info();
    expect([gotA, gotB]).toEqual([{ branchId: currentBranchId }, { branchId: currentBranchId }]);
    expect(currentBranchId).not.toBe(setup.root);
    expect((await s.history()).map((m) => m.content).sort()).toEqual(["A", "B", "write the files"]);
    expect(undos(setup.logFile)).toBe(N);
  });
});

describe("an Agents session read after the move was killed", () => {
  it("is served the branch the finished move made current, and its items are saved there", async () => {
    // The rollback leaves "done" behind: what a run served before it finished would go on after.
    const setup = await setUp("done");
    await killedMidway(setup);
    const fp = open(setup.dbPath, setup.logFile);
    const s = await fp.getSession(setup.sessionId, { userId: USER });
    const memory = new ForkpointSession(s);
    expect((await memory.getItems()).map((i) => (i as { content?: unknown }).content)).toEqual(["write the files"]);
    await memory.addItems([{ role: "user", content: "question" }]);
    // An item is stored as the message's content.
    const item = { role: "user", content: "question" };
    expect(await standing(s, setup)).toEqual({ onRoot: false, contents: ["write the files", item], filesLeft: 0 });
  });
});

describe("a write while another process's move runs", () => {
  it("waits for it and lands on the branch it made current", async () => {
    const setup = await setUp();
    const child = await rollbackInChild(setup, 2, 40);
    const fp = open(setup.dbPath, setup.logFile);
    const s = await fp.getSession(setup.sessionId, { userId: USER });
    expect((await s.append({ role: "user", content: "after" }))[0]!.branchId).not.toBe(setup.root);
    expect(await child.exited).toBe(0);
    expect(await standing(s, setup)).toEqual({ onRoot: false, contents: ["write the files", "after"], filesLeft: 0 });
    expect((await s.history({ branchId: setup.root })).map((m) => m.content)).toEqual(["write the files"]);
  });

  it("is refused MOVE_IN_PROGRESS once busyTimeoutMs runs out, nothing written", async () => {
    const setup = await setUp();
    await rollbackInChild(setup, 2, 400);
    const fp = open(setup.dbPath, setup.logFile, { busyTimeoutMs: 50 });
    const s = await fp.getSession(setup.sessionId, { userId: USER });
    const error = await s.setState({ x: 1 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((error as ConflictError).code).toBe("MOVE_IN_PROGRESS");
    expect(await s.getState()).toEqual({});
  });
});

describe("writes made while the handle's own move runs, not awaited", () => {
  it("land after it, in the order they were made, and a move made after them goes after them", async () => {
    const dir = tempDir("forkpoint-after-move-order-");
    const fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [writeFileTool({ undoDelayMs: 60 })] });
    opened.push(fp);
    const s = await fp.createSession({ userId: USER });
    await s.append({ role: "user", content: "q" });
    const cp = await s.checkpoint({ name: "q" });
    for (let i = 0; i < 4; i++) await s.invoke("write_file", { path: path.join(dir, `f${i}.txt`), text: "x" });
    const undone = new Promise((resolve) => fp.on("undo", resolve));
    const moving = s.rollback(cp.id);
    await undone;
    const writes = [s.append({ role: "user", content: "A" }), s.append({ role: "user", content: "B" }), s.setState({ n: 1 })];
    writes.push(s.append({ role: "user", content: "C" }));
    await new Promise((r) => setTimeout(r, 150));
    writes.push(s.append({ role: "user", content: "D" }));
    const second = s.undo();
    const moved = await moving;
    await Promise.all(writes);
    await second;
    // The undo came after the writes: they stay on the rollback's branch, which the undo left.
    expect((await s.history({ branchId: moved.branch.id })).map((m) => m.content)).toEqual(["q", "A", "B", "C", "D"]);
    expect((await s.info()).currentBranchId).not.toBe(moved.branch.id);
  });
});

describe("writes of another handle made together while a move runs", () => {
  it("are refused together once busyTimeoutMs runs out: none lands after an earlier one was refused", async () => {
    const dir = tempDir("forkpoint-after-move-together-");
    const db = path.join(dir, "forkpoint.db");
    const a = openForkpoint({ path: db, tools: [writeFileTool({ undoDelayMs: 100 })] });
    const b = openForkpoint({ path: db, tools: [writeFileTool()], busyTimeoutMs: 500 });
    opened.push(a, b);
    const s = await a.createSession({ userId: USER });
    await s.append({ role: "user", content: "q" });
    const cp = await s.checkpoint({ name: "q" });
    // The move outlasts one write's wait, not five waits in a row.
    for (let i = 0; i < 11; i++) await s.invoke("write_file", { path: path.join(dir, `f${i}.txt`), text: "x" });
    const t = await b.getSession(s.id, { userId: USER });
    const undone = new Promise((resolve) => a.on("undo", resolve));
    const moving = s.rollback(cp.id);
    await undone;
    const told = await Promise.all(
      ["b1", "b2", "b3", "b4", "b5"].map((content) =>
        t.append({ role: "user", content }).then(
          () => "landed",
          (e: { code?: string }) => e.code,
        ),
      ),
    );
    await moving;
    expect(told).toEqual(Array(5).fill("MOVE_IN_PROGRESS"));
    expect((await s.history()).map((m) => m.content)).toEqual(["q"]);
  });
});
