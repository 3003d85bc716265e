// fp.on's listeners cannot fail a call whose change is stored, the `logger` option hears what no call can throw, and
// `await using` closes the database.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, expectTypeOf, it, vi } from "vitest";
import {
  DatabaseError,
  defineTool,
  ValidationError,
  type Checkpoint,
  type Forkpoint,
  type ForkpointLogger,
  type Message,
  type MoveResult,
  type PruneReport,
  type RecoveryReport,
} from "../../src/index.js";
import { appendLineTool, readLog, tempDir, writeFileTool, type WriteArgs, type WriteResult } from "../fixtures/file-tools.js";
import { tempDatabases, thrownBy } from "../helpers.js";
import { expireLeases, onPostgres, openForkpoint } from "../fixtures/backend.js";
import { nodeArgs } from "../fixtures/compiled.js";

const dbs = tempDatabases();
const repoRoot = path.resolve(import.meta.dirname, "../..");

/** A logger that keeps what it is told. */
function recordingLogger() {
  const lines: { level: "warn" | "error"; message: string; detail: unknown }[] = [];
  const logger: ForkpointLogger = {
    warn: (message, detail) => lines.push({ level: "warn", message, detail }),
    error: (message, detail) => lines.push({ level: "error", message, detail }),
  };
  return { logger, lines };
}

describe("event listeners", () => {
  it("a listener that throws is logged: the call resolves, its change is stored, and later listeners still run", async () => {
    const { logger, lines } = recordingLogger();
    const { fp } = dbs.open({ logger });
    const boom = new Error("listener bug");
    const seen: Checkpoint[] = [];
    fp.on("checkpoint", () => {
      throw boom;
    });
    fp.on("checkpoint", (cp) => seen.push(cp));
    const s = await fp.createSession({ userId: "alice" });
    const cp = await s.checkpoint({ name: "kept" });
    expect(seen).toEqual([cp]);
    expect((await s.restore(cp.id)).checkpoint).toEqual(cp);
    expect(lines).toEqual([{ level: "error", message: expect.stringContaining('"checkpoint" listener failed'), detail: boom }]);
  });

  it("an async listener that rejects is logged, not left as an unhandled rejection", async () => {
    const { logger, lines } = recordingLogger();
    const { fp } = dbs.open({ logger });
    const boom = new Error("async listener bug");
    fp.on("checkpoint", async () => {
      await Promise.resolve();
      throw boom;
    });
    const s = await fp.createSession({ userId: "alice" });
    await s.checkpoint();
    await vi.waitFor(() => expect(lines).toHaveLength(1));
    expect(lines[0]).toMatchObject({ level: "error", detail: boom });
  });

  it("a logger that throws fails nothing; without `error`, errors go to `warn`", async () => {
    const warned: string[] = [];
    const { fp } = dbs.open({ logger: { warn: (message) => (warned.push(message), assertNever()) } });
    fp.on("checkpoint", () => {
      throw new Error("listener bug");
    });
    const s = await fp.createSession({ userId: "alice" });
    await expect(s.checkpoint()).resolves.toMatchObject({ sessionId: s.id });
    expect(warned).toEqual([expect.stringContaining('"checkpoint" listener failed')]);
  });

  it("logs to console.error by default", async () => {
    const spy = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const { fp } = dbs.open();
      const boom = new Error("listener bug");
      fp.on("checkpoint", () => {
        throw boom;
      });
      await (await fp.createSession({ userId: "alice" })).checkpoint();
      expect(spy).toHaveBeenCalledWith(expect.stringContaining('"checkpoint" listener failed'), boom);
    } finally {
      spy.mockRestore();
    }
  });

  it("types each event's payload by its name", () => {
    const fp = null as unknown as Forkpoint;
    const typed = () => {
      fp.on("rollback", (move) => expectTypeOf(move).toEqualTypeOf<MoveResult>());
      fp.on("edit", (move) => expectTypeOf(move.message).toEqualTypeOf<Message>());
      fp.on("prune", (report) => expectTypeOf(report).toEqualTypeOf<PruneReport>());
      fp.on("recovery", (report) => expectTypeOf(report).toEqualTypeOf<RecoveryReport>());
      fp.on("handoff", (h) => expectTypeOf(h.to.id).toEqualTypeOf<string>());
      // @ts-expect-error: a checkpoint listener does not get a move
      fp.on("checkpoint", (cp: MoveResult) => cp);
      // @ts-expect-error: no such event
      fp.on("checkpointed", () => undefined);
    };
    expect(typed).toBeTypeOf("function");
  });
});

function assertNever(): never {
  throw new Error("this logger throws");
}

describe("the logger option", () => {
  it("refuses a logger without a warn function, naming `logger`, and creates no file", () => {
    const file = dbs.path();
    for (const logger of [{}, { warn: "no" }, { warn: () => undefined, error: 1 }, null]) {
      const e = thrownBy(() => openForkpoint({ path: file, logger } as never));
      expect(e).toBeInstanceOf(ValidationError);
      expect(e.message).toContain("logger");
    }
    expect(fs.existsSync(file)).toBe(false);
  });
});

describe("warnings from background work", () => {
  // SQLite's: a WAL worker folds a SQLite file's log.
  it.skipIf(onPostgres)("a WAL worker that stops (here: it cannot open the file) is logged once", async () => {
    const { logger, lines } = recordingLogger();
    const file = dbs.path();
    const { fp } = dbs.open({ path: file, walWorker: true, logger });
    const s = await fp.createSession({ userId: "alice" });
    // The writer keeps its open (unlinked) file; the worker, started after 256 writes, finds nothing at the path.
    fs.rmSync(file);
    for (let i = 0; i < 300; i++) await s.append({ role: "user", content: `m${i}` });
    await vi.waitFor(() => expect(lines).toHaveLength(1), { timeout: 10_000 });
    expect(lines[0]).toMatchObject({ level: "warn", message: expect.stringContaining("WAL checkpoint worker stopped") });
    expect(await s.history()).toHaveLength(300);
  });

  it("a workspace scan that fails after a tool ran is logged (the call succeeded; its changes count as drift)", async () => {
    const { logger, lines } = recordingLogger();
    // A file the workspace cannot store is skipped, not a failure: what fails is a workspace the tool removed (after
    // changing its .gitignore, so that the scan walks the tree rather than asking its watcher what changed).
    const removeDir = ({ dir }: { dir: string }) => {
      fs.writeFileSync(path.join(dir, ".gitignore"), "*.log\n");
      fs.rmSync(dir, { recursive: true });
      return null;
    };
    const { fp } = dbs.open({ logger, tools: [defineTool<{ dir: string }, null>({ name: "remove_dir", run: removeDir })] });
    const dir = tempDir("forkpoint-logger-ws-");
    try {
      const s = await fp.createSession({ userId: "alice" });
      await s.attachWorkspace(dir);
      await expect(s.invoke("remove_dir", { dir })).resolves.toBeNull();
      expect(lines).toEqual([
        {
          level: "warn",
          message: expect.stringContaining("scanning the workspace"),
          detail: expect.objectContaining({ code: "WORKSPACE_MISSING" }),
        },
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("recovery at open", () => {
  const dirs: string[] = [];
  const opened: Forkpoint[] = [];
  afterEach(async () => {
    for (const fp of opened.splice(0)) await fp.close();
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A rollback over two write_file calls, killed in its first undo (tests/fixtures/crash-leave-move.ts). */
  async function crashedMidMove() {
    const dir = tempDir("forkpoint-logger-crash-");
    dirs.push(dir);
    const dbPath = path.join(dir, "forkpoint.db");
    const logFile = path.join(dir, "calls.jsonl");
    const full = openForkpoint({ path: dbPath, tools: [writeFileTool(), appendLineTool()] });
    const s = await full.createSession({ userId: "alice" });
    const cp0 = await s.checkpoint();
    await s.invoke("write_file", { path: path.join(dir, "a.txt"), text: "A" });
    await s.invoke("write_file", { path: path.join(dir, "b.txt"), text: "B" });
    await full.close();
    const child = spawn(
      process.execPath,
      [...nodeArgs(path.join(repoRoot, "tests/fixtures/crash-leave-move.ts")), dbPath, s.id, "alice", cp0.id, logFile],
      { cwd: repoRoot, stdio: "ignore" },
    );
    const exited = new Promise((resolve) => child.on("exit", resolve));
    while (readLog(logFile).filter((c) => c.op === "undo").length === 0) {
      if (child.exitCode !== null) throw new Error("the child exited before its first undo");
      await new Promise((r) => setTimeout(r, 5));
    }
    child.kill("SIGKILL");
    await exited;
    await expireLeases(dbPath);
    return dbPath;
  }

  it("warns of a move left waiting for a tool not registered, and logs a resumed move that fails again", async () => {
    const dbPath = await crashedMidMove();
    const bare = recordingLogger();
    const first = openForkpoint({ path: dbPath, logger: bare.logger });
    opened.push(first);
    await first.ready;
    expect(bare.lines).toEqual([
      { level: "warn", message: expect.stringMatching(/left for later.*TOOL_NOT_REGISTERED.*write_file/), detail: undefined },
    ]);
    await first.close();

    const failing = recordingLogger();
    const broken = defineTool<WriteArgs, WriteResult>({
      name: "write_file",
      run: () => ({ previous: null }),
      undo: () => {
        throw new Error("disk gone");
      },
    });
    const second = openForkpoint({ path: dbPath, tools: [broken], logger: failing.logger });
    opened.push(second);
    await second.ready;
    expect(failing.lines).toHaveLength(1);
    expect(failing.lines[0]).toMatchObject({ level: "error", message: expect.stringContaining("resuming interrupted move") });
    expect(String(failing.lines[0]!.detail)).toContain("disk gone");
  });
});

describe("await using", () => {
  it("closes the database when the block ends", async () => {
    const file = dbs.path();
    let kept: Forkpoint;
    {
      await using fp = openForkpoint({ path: file });
      kept = fp;
      await fp.createSession({ userId: "alice" });
    }
    const e = await kept.listSessions({ userId: "alice" }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(e).toBeInstanceOf(DatabaseError);
    expect((e as DatabaseError).code).toBe("CLOSED");
  });
});
