// A move by an opener that lacks a reversible tool's definition: refused (TOOL_NOT_REGISTERED) before anything moves,
// or, with { unregistered: "leave" }, those calls reported apart and left as they are; never counted as skipped.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import {
  ConflictError,
  defineTool,
  type Forkpoint,
  type RecoveryReport,
  type ToolDefinition,
  type ToolInvocation,
} from "../../src/index.js";
import {
  appendLineTool,
  readLog,
  readOrNull,
  sendEmailTool,
  tempDir,
  writeFileTool,
  type WriteArgs,
  type WriteResult,
} from "../fixtures/file-tools.js";
import { ids, rows } from "../fixtures/harness.js";
import { rejectionOf } from "../helpers.js";
import { dumpOf, expireLeases, onPostgres, openForkpoint, sqlOn } from "../fixtures/backend.js";
import { nodeArgs } from "../fixtures/compiled.js";

const USER = "dora";
const opened: Forkpoint[] = [];
afterEach(async () => {
  for (const fp of opened.splice(0)) await fp.close().catch(() => undefined);
});
function open(dbPath: string, tools: ToolDefinition[]): Forkpoint {
  const fp = openForkpoint({ path: dbPath, tools });
  opened.push(fp);
  return fp;
}

/**
 * An opener with write_file (reversible) and send_email (irreversible): cp0, write a, mail, write b; then closed.
 * Returns what a second opener needs.
 */
async function recordedElsewhere() {
  const dir = tempDir("forkpoint-unregistered-");
  const dbPath = path.join(dir, "forkpoint.db");
  const outbox = path.join(dir, "outbox.jsonl");
  const a = path.join(dir, "a.txt");
  const b = path.join(dir, "b.txt");
  const first = open(dbPath, [writeFileTool(), sendEmailTool({ outbox })]);
  const s = await first.createSession({ userId: USER });
  const cp0 = await s.checkpoint({ name: "start" });
  await s.invoke("write_file", { path: a, text: "A" });
  await s.invoke("send_email", { to: "bob@example.com", subject: "hi" });
  await s.invoke("write_file", { path: b, text: "B" });
  const track = (await s.toolTrack()) as [ToolInvocation, ToolInvocation, ToolInvocation];
  const root = (await s.info()).currentBranchId;
  await first.close();
  return { dir, dbPath, outbox, a, b, sessionId: s.id, cp0, track, root };
}

describe("a move by an opener without a reversible tool's definition", () => {
  it("is refused with TOOL_NOT_REGISTERED naming the tool, before anything moves", async () => {
    const w = await recordedElsewhere();
    const second = open(w.dbPath, []);
    const s = await second.getSession(w.sessionId, { userId: USER });
    const before = await dumpOf(w.dbPath);

    const error = await rejectionOf(s.rollback(w.cp0.id));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.code).toBe("TOOL_NOT_REGISTERED");
    expect(error.message).toContain('"write_file"');
    expect(error.message).toContain(w.track[0].id);
    expect(error.message).toContain(w.track[2].id);
    // The irreversible mail is not what refuses it.
    expect(error.message).not.toContain("send_email");

    expect(await dumpOf(w.dbPath)).toEqual(before);
    expect([readOrNull(w.a), readOrNull(w.b)]).toEqual(["A", "B"]);
    expect((await s.info()).currentBranchId).toBe(w.root);
  });

  it('with { unregistered: "leave" } reports those calls apart, leaves them applied, and never counts them as skipped', async () => {
    const w = await recordedElsewhere();
    const s = await open(w.dbPath, []).getSession(w.sessionId, { userId: USER });

    const moved = await s.rollback(w.cp0.id, { unregistered: "leave" });
    expect(ids(moved.unregistered)).toEqual([w.track[2].id, w.track[0].id]); // the order an undo would take
    expect(ids(moved.skipped)).toEqual([w.track[1].id]); // the mail: irreversible, still skipped
    expect(moved.undone).toEqual([]);
    expect(moved.unregistered.every((t) => t.applied)).toBe(true);
    expect([readOrNull(w.a), readOrNull(w.b)]).toEqual(["A", "B"]);
    expect((await s.info()).currentBranchId).toBe(moved.branch.id);
  });

  it("plan() shows them beforehand, and an opener with the tool undoes them", async () => {
    const w = await recordedElsewhere();
    const without = open(w.dbPath, []);
    const planned = await (await without.getSession(w.sessionId, { userId: USER })).plan({ checkpointId: w.cp0.id });
    expect(ids(planned.unregistered)).toEqual([w.track[2].id, w.track[0].id]);
    expect(planned.undone).toEqual([]);
    expect(ids(planned.skipped)).toEqual([w.track[1].id]);
    await without.close();

    const withTool = open(w.dbPath, [writeFileTool()]);
    const s = await withTool.getSession(w.sessionId, { userId: USER });
    const plan2 = await s.plan({ checkpointId: w.cp0.id });
    expect(plan2.unregistered).toEqual([]);
    expect(ids(plan2.undone)).toEqual([w.track[2].id, w.track[0].id]);
    const moved = await s.rollback(w.cp0.id);
    expect(ids(moved.undone)).toEqual([w.track[2].id, w.track[0].id]);
    expect(moved.unregistered).toEqual([]);
    expect([readOrNull(w.a), readOrNull(w.b)]).toEqual([null, null]);
  });

  it("a call left applied by a leaving move is undone by the next move of an opener with the tool", async () => {
    const w = await recordedElsewhere();
    const without = open(w.dbPath, []);
    await (await without.getSession(w.sessionId, { userId: USER })).rollback(w.cp0.id, { unregistered: "leave" });
    // Still off the current lineage and applied: every move without the tool must be told again.
    const s1 = await without.getSession(w.sessionId, { userId: USER });
    await s1.append({ role: "user", content: "on the new branch" });
    const cp1 = await s1.checkpoint({ name: "new branch" });
    expect((await rejectionOf(s1.rollback(cp1.id))).code).toBe("TOOL_NOT_REGISTERED");
    await without.close();

    const s2 = await open(w.dbPath, [writeFileTool()]).getSession(w.sessionId, { userId: USER });
    const moved = await s2.rollback(cp1.id);
    expect(ids(moved.undone)).toEqual([w.track[2].id, w.track[0].id]);
    expect([readOrNull(w.a), readOrNull(w.b)]).toEqual([null, null]);
  });

  it("replays count too: switching back onto calls it would replay is refused, or reports them with leave", async () => {
    const w = await recordedElsewhere();
    const withTool = open(w.dbPath, [writeFileTool(), sendEmailTool({ outbox: w.outbox })]);
    await (await withTool.getSession(w.sessionId, { userId: USER })).rollback(w.cp0.id);
    expect([readOrNull(w.a), readOrNull(w.b)]).toEqual([null, null]);
    await withTool.close();

    const s = await open(w.dbPath, []).getSession(w.sessionId, { userId: USER });
    const before = await dumpOf(w.dbPath);
    const error = await rejectionOf(s.switchBranch(w.root));
    expect(error.code).toBe("TOOL_NOT_REGISTERED");
    expect(await dumpOf(w.dbPath)).toEqual(before);
    expect(ids((await s.plan({ branchId: w.root })).unregistered)).toEqual([w.track[0].id, w.track[2].id]);

    const moved = await s.switchBranch(w.root, { unregistered: "leave" });
    expect(ids(moved.unregistered)).toEqual([w.track[0].id, w.track[2].id]); // oldest first, as a replay would
    expect(moved.replayed).toEqual([]);
    expect(moved.unregistered.some((t) => t.applied)).toBe(false);
    expect([readOrNull(w.a), readOrNull(w.b)]).toEqual([null, null]);
  });

  it("an opener that registers the tool without an undo cannot undo it either", async () => {
    const w = await recordedElsewhere();
    const noUndo = defineTool({ name: "write_file", run: () => null });
    const s = await open(w.dbPath, [noUndo]).getSession(w.sessionId, { userId: USER });
    expect((await rejectionOf(s.rollback(w.cp0.id))).code).toBe("TOOL_NOT_REGISTERED");
  });

  it("a call recorded when its tool had no undo stays irreversible (skipped), even where the tool now has one", async () => {
    const w = await recordedElsewhere();
    const mailWithUndo = defineTool({ name: "send_email", run: () => null, undo: () => {} });
    const s = await open(w.dbPath, [writeFileTool(), mailWithUndo]).getSession(w.sessionId, { userId: USER });
    const moved = await s.rollback(w.cp0.id);
    expect(ids(moved.skipped)).toEqual([w.track[1].id]);
    expect(ids(moved.undone)).toEqual([w.track[2].id, w.track[0].id]);
  });

  it("calls recorded before reversibility was kept (null) are what their tool is here now", async () => {
    const w = await recordedElsewhere();
    await sqlOn(w.dbPath, `UPDATE entries SET reversible = NULL WHERE kind = 'tool'`);
    const s = await open(w.dbPath, []).getSession(w.sessionId, { userId: USER });
    // As before the column existed: not registered here, so skipped, and the move goes ahead.
    const moved = await s.rollback(w.cp0.id);
    expect(ids(moved.skipped)).toEqual([w.track[2].id, w.track[1].id, w.track[0].id]); // newest application first
    expect(moved.unregistered).toEqual([]);
  });

  // A SQLite file of that version: PostgreSQL's schema has had the column from its first migration.
  it.skipIf(onPostgres)("a database written before reversibility was kept moves without the tool as it did then (skipped)", async () => {
    const dir = tempDir("forkpoint-unregistered-");
    const dbPath = path.join(dir, "forkpoint.db");
    fs.copyFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/databases/schema-0000.db"), dbPath);
    const fp = open(dbPath, []);
    const [alice] = (await fp.listSessions({ userId: "alice" })).items;
    const s = await fp.getSession(alice!.id, { userId: "alice" });
    const afterTool = (await s.listCheckpoints()).items.find((c) => c.name === "after tool")!;
    // Its note call (undone there, recorded with no reversibility) would be replayed where note is registered.
    expect(await rows(dbPath, `SELECT reversible FROM entries WHERE kind = 'tool'`)).toEqual([{ reversible: null }]);
    const moved = await s.rollback(afterTool.id);
    expect(moved.skipped.map((t) => t.tool)).toEqual(["note"]);
    expect(moved.unregistered).toEqual([]);
    expect(await fp.verify()).toMatchObject({ ok: true });
  });

  it("recordToolCall of a tool not registered here is of unknown kind: undone where the tool is registered later", async () => {
    const dir = tempDir("forkpoint-unregistered-");
    const dbPath = path.join(dir, "forkpoint.db");
    const a = path.join(dir, "a.txt");
    const first = open(dbPath, []);
    const s = await first.createSession({ userId: USER });
    const cp0 = await s.checkpoint();
    // Some framework ran the tool; the opener recording it does not know it.
    await writeFileTool().run(
      { path: a, text: "A" },
      { sessionId: s.id, userId: USER, invocationId: "x", replay: false, signal: new AbortController().signal },
    );
    const recorded = await s.recordToolCall({ tool: "write_file", args: { path: a, text: "A" }, result: { previous: null } });
    const planHere = await s.plan({ checkpointId: cp0.id });
    expect(ids(planHere.skipped)).toEqual([recorded.id]);
    expect(planHere.unregistered).toEqual([]);
    await first.close();

    const s2 = await open(dbPath, [writeFileTool()]).getSession(s.id, { userId: USER });
    const moved = await s2.rollback(cp0.id);
    expect(ids(moved.undone)).toEqual([recorded.id]);
    expect(readOrNull(a)).toBeNull();
  });

  it('refuses a move with scope "both" before the files move', async () => {
    const w = await recordedElsewhere();
    const withTool = open(w.dbPath, [writeFileTool(), sendEmailTool({ outbox: w.outbox })]);
    const s0 = await withTool.getSession(w.sessionId, { userId: USER });
    const ws = path.join(w.dir, "ws");
    const { mkdirSync, writeFileSync } = await import("node:fs");
    mkdirSync(ws);
    writeFileSync(path.join(ws, "notes.txt"), "v1");
    await s0.attachWorkspace(ws);
    const cpFiles = await s0.checkpoint({ name: "files v1" });
    await s0.invoke("write_file", { path: w.a, text: "A2" });
    writeFileSync(path.join(ws, "notes.txt"), "v2");
    await s0.checkpoint({ name: "files v2" });
    await withTool.close();

    const s = await open(w.dbPath, []).getSession(w.sessionId, { userId: USER });
    const before = await dumpOf(w.dbPath);
    const error = await rejectionOf(s.rollback(cpFiles.id, { scope: "both" }));
    expect(error.code).toBe("TOOL_NOT_REGISTERED");
    expect(readOrNull(path.join(ws, "notes.txt"))).toBe("v2");
    expect(await dumpOf(w.dbPath)).toEqual(before);
  });
});

describe("a leaving move interrupted by a crash", () => {
  const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

  /** cp0, append_line, write a, write b by a full opener; then a child without append_line killed in its first undo. */
  async function crashedMidMove() {
    const dir = tempDir("forkpoint-unregistered-crash-");
    const dbPath = path.join(dir, "forkpoint.db");
    const logFile = path.join(dir, "calls.jsonl");
    const [lines, a, b] = ["lines.txt", "a.txt", "b.txt"].map((f) => path.join(dir, f)) as [string, string, string];
    const full = open(dbPath, [writeFileTool(), appendLineTool()]);
    const s = await full.createSession({ userId: USER });
    const cp0 = await s.checkpoint();
    await s.invoke("append_line", { path: lines, line: "one" });
    await s.invoke("write_file", { path: a, text: "A" });
    await s.invoke("write_file", { path: b, text: "B" });
    const track = (await s.toolTrack()) as [ToolInvocation, ToolInvocation, ToolInvocation];
    await full.close();

    const child = spawn(
      process.execPath,
      [...nodeArgs(path.join(repoRoot, "tests/fixtures/crash-leave-move.ts")), dbPath, s.id, USER, cp0.id, logFile],
      { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    const exited = new Promise((resolve) => child.on("exit", resolve));
    // The first undo (of b) has done its work and sleeps: the move is journaled, its first step running.
    while (readLog(logFile).filter((c) => c.op === "undo").length === 0) {
      if (child.exitCode !== null) throw new Error(`child exited early:\n${output}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    child.kill("SIGKILL");
    await exited;
    await expireLeases(dbPath);
    return { dbPath, sessionId: s.id, track, lines, a, b };
  }

  it("is resumed with the same unregistered calls, and a handler calling back during recovery at open is refused, not hung", async () => {
    const c = await crashedMidMove();
    const seen: unknown[] = [];
    let fp!: Forkpoint;
    // write_file whose undo also tries to note itself on its own session (through a fresh handle) before undoing.
    const base = writeFileTool();
    const noting = defineTool<WriteArgs, WriteResult>({
      name: "write_file",
      run: (args, ctx) => base.run(args, ctx),
      undo: async (recorded, ctx) => {
        const s = await fp.getSession(ctx.sessionId, { userId: ctx.userId });
        seen.push(
          await s.append({ role: "note", content: "undoing" }).then(
            (m) => m,
            (e: unknown) => e,
          ),
        );
        await base.undo!(recorded, ctx);
      },
    });
    fp = open(c.dbPath, [noting]);
    let report: RecoveryReport | undefined;
    fp.on("recovery", (r: RecoveryReport) => {
      report = r;
    });
    await fp.ready;

    expect(report!.resumed).toHaveLength(1);
    const resumed = report!.resumed[0]!;
    expect(ids(resumed.unregistered)).toEqual([c.track[0].id]);
    expect(ids(resumed.unknown)).toEqual([c.track[2].id]); // the step the crash interrupted
    expect(ids(resumed.undone)).toEqual([c.track[1].id]);
    expect(resumed.skipped).toEqual([]);
    expect(seen).toHaveLength(1);
    expect((seen[0] as ConflictError).code).toBe("REENTRANT_CALL");
    expect([readOrNull(c.lines), readOrNull(c.a), readOrNull(c.b)]).toEqual(["one\n", null, null]);
  });

  it("fp.recover() from a handler that recovery at open runs does not wait for that recovery", async () => {
    const c = await crashedMidMove();
    const seen: unknown[] = [];
    let fp!: Forkpoint;
    const base = writeFileTool();
    const recovering = defineTool<WriteArgs, WriteResult>({
      name: "write_file",
      // Bounds the wait on itself this test is about: a hang is a timed-out (failed) step, not a stuck test.
      timeoutMs: 10_000,
      run: (args, ctx) => base.run(args, ctx),
      undo: async (recorded, ctx) => {
        seen.push(await fp.recover());
        await base.undo!(recorded, ctx);
      },
    });
    fp = open(c.dbPath, [recovering]);
    let report: RecoveryReport | undefined;
    fp.on("recovery", (r: RecoveryReport) => {
      report = r;
    });
    await fp.ready;
    // The move being recovered is left to the recovery that runs it; the undo the crash interrupted (b's) is unknown
    // whoever finishes the move, so it is listed already.
    const later = seen as RecoveryReport[];
    expect(later.map((r) => ({ ...r, unknown: ids(r.unknown) }))).toEqual([
      { resumed: [], waiting: [], failed: [], unknown: [c.track[2].id], workspaces: [] },
    ]);
    expect(report!.failed).toEqual([]);
    expect(ids(report!.resumed[0]!.undone)).toEqual([c.track[1].id]);
  });

  it("waits, naming TOOL_NOT_REGISTERED, when the reopening opener lacks a tool a pending step needs", async () => {
    const c = await crashedMidMove();
    const bare = openForkpoint({ path: c.dbPath, recover: false });
    opened.push(bare);
    const report = await bare.recover();
    expect(report.resumed).toEqual([]);
    expect(report.waiting).toHaveLength(1);
    expect(report.waiting[0]!.reason).toMatch(/TOOL_NOT_REGISTERED.*write_file/);
  });
});
