// A write on the current branch while a move of the session is unfinished, its process killed midway, lands after that
// move, on the branch it makes current, never on the branch the move is leaving.
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { ConflictError, type Forkpoint, type SessionHandle as Session } from "../../src/index.js";
import { expireLeases, openForkpoint, sqlOn } from "../fixtures/backend.js";
import { nodeArgs } from "../fixtures/compiled.js";
import { blockTool, readLog, tempDir, writeFileTool } from "../fixtures/file-tools.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const USER = "dana";
const N = 12;
const opened: Forkpoint[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const fp of opened.splice(0)) await fp.close().catch(() => undefined);
});

function open(dbPath: string, logFile: string | null): Forkpoint {
  const tools = logFile === null ? [] : [writeFileTool({ logFile }), blockTool()];
  const fp = openForkpoint({ path: dbPath, tools, recover: false });
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

/** A message, a checkpoint, then N write_file calls over new files. */
async function setUp(): Promise<Setup> {
  const dir = tempDir("forkpoint-after-move-");
  const dbPath = path.join(dir, "forkpoint.db");
  const logFile = path.join(dir, "calls.jsonl");
  const files = Array.from({ length: N }, (_, i) => path.join(dir, `f${i}.txt`));
  const fp = open(dbPath, logFile);
  const s = await fp.createSession({ userId: USER });
  await s.append({ role: "user", content: "write the files" });
  const cp0 = await s.checkpoint({ name: "before" });
  for (const file of files) await s.invoke("write_file", { path: file, text: "new" });
  const root = (await s.info()).currentBranchId;
  await fp.close();
  opened.splice(opened.indexOf(fp), 1);
  return { dbPath, logFile, files, sessionId: s.id, root, cp0: cp0.id };
}

const undos = (logFile: string) => readLog(logFile).filter((c) => c.op === "undo").length;

/** A child rolling the session back to `cp0`, each undo taking `delayMs`; resolves once it has undone `after`. */
async function rollbackInChild(setup: Setup, after: number, delayMs: number) {
  const script = path.join(repoRoot, "tests/fixtures/crash-rollback.ts");
  const args = [setup.dbPath, setup.sessionId, USER, "rollback", setup.cp0, setup.logFile, String(delayMs)];
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
  const child = await rollbackInChild(setup, 3, 60);
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

  it("is refused MOVE_IN_PROGRESS, nothing written, when the move cannot be finished here (its tools not registered)", async () => {
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
    expect((error as ConflictError).code).toBe("MOVE_IN_PROGRESS");
    expect(await entries()).toEqual(before);
    expect((await standing(s, setup)).onRoot).toBe(true);
  });
});

describe("a write while another process's move runs", () => {
  it("is not held up: it lands now, on the branch the move leaves, as if made before the move", async () => {
    const setup = await setUp();
    const child = await rollbackInChild(setup, 2, 40);
    const fp = open(setup.dbPath, setup.logFile);
    const s = await fp.getSession(setup.sessionId, { userId: USER });
    expect((await s.append({ role: "user", content: "meanwhile" }))[0]!.branchId).toBe(setup.root);
    expect(await child.exited).toBe(0);
    expect(await standing(s, setup)).toEqual({ onRoot: false, contents: ["write the files"], filesLeft: 0 });
    expect((await s.history({ branchId: setup.root })).map((m) => m.content)).toEqual(["write the files", "meanwhile"]);
  });
});
