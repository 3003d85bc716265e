// Tool time limits and cancellation: defineTool({ timeoutMs }), ctx.signal aborted on timeout and on close; the engine
// stops waiting for a handler that ignores its signal, records the call or step as failed on a timeout (left unknown on
// close, as a crash leaves it: see close-while-running.test.ts), and ignores what comes later.
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  DatabaseError,
  ToolReplayError,
  ToolTimeoutError,
  ToolUndoError,
  ValidationError,
  defineTool,
  type Forkpoint,
  type ToolDefinition,
} from "../../src/index.js";
import { readOrNull, tempDir, writeFileTool, type WriteArgs, type WriteResult } from "../fixtures/file-tools.js";
import { rows } from "../fixtures/harness.js";
import { rejectionOf, thrownBy } from "../helpers.js";
import { dumpOf, expireLeases, openForkpoint, sqlOn } from "../fixtures/backend.js";

const USER = "fay";
const opened: Forkpoint[] = [];
afterEach(async () => {
  for (const fp of opened.splice(0)) await fp.close().catch(() => undefined);
});

function world(tools: ToolDefinition[]) {
  const dir = tempDir("forkpoint-timeouts-");
  const dbPath = path.join(dir, "forkpoint.db");
  const fp = openForkpoint({ path: dbPath, tools });
  opened.push(fp);
  return { dir, dbPath, fp };
}

/** A handler's promise that never settles (and ignores its signal). */
const never = (): Promise<null> => new Promise<null>(() => undefined);

/** A promise to settle by hand. */
function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** write_file whose undo (or run, when replaying) hangs while `hang` says so, ignoring its signal; signals seen are kept. */
function hangingWrite(control: { hangUndo?: boolean; hangReplay?: boolean }, signals: AbortSignal[], timeoutMs = 30): ToolDefinition {
  const base = writeFileTool();
  return defineTool<WriteArgs, WriteResult>({
    name: "slow_write",
    timeoutMs,
    run: async (args, ctx) => {
      signals.push(ctx.signal);
      if (ctx.replay && control.hangReplay) return never() as Promise<never>;
      return base.run(args, ctx);
    },
    undo: async (recorded, ctx) => {
      signals.push(ctx.signal);
      if (control.hangUndo) await never();
      else await base.undo!(recorded, ctx);
    },
  });
}

describe("defineTool({ timeoutMs })", () => {
  it.each([0, -5, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, "100"])("refuses %s", (bad) => {
    const error = thrownBy(() => defineTool({ name: "t", run: () => null, timeoutMs: bad as number }));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.field).toBe("timeoutMs");
  });

  it("checks a plain tool object handed to openForkpoint the same way", () => {
    const error = thrownBy(() => openForkpoint({ path: ":memory:", tools: [{ name: "t", run: () => null, timeoutMs: 0 }] }));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.field).toBe("timeoutMs");
  });

  it("hands every handler a live signal when nothing times out", async () => {
    const signals: AbortSignal[] = [];
    const { dir, fp } = world([hangingWrite({}, signals, 60_000)]);
    const s = await fp.createSession({ userId: USER });
    const cp = await s.checkpoint();
    await s.invoke("slow_write", { path: path.join(dir, "f"), text: "x" });
    await s.rollback(cp.id);
    expect(signals).toHaveLength(2);
    expect(signals.every((sig) => sig instanceof AbortSignal && !sig.aborted)).toBe(true);
  });
});

describe("a run that times out", () => {
  it("is a failed call: invoke rejects with TOOL_TIMEOUT, the track records the error, the signal is aborted", async () => {
    let seen: AbortSignal | undefined;
    const { fp } = world([defineTool({ name: "stuck", timeoutMs: 20, undo: () => {}, run: (_a, ctx) => ((seen = ctx.signal), never()) })]);
    const s = await fp.createSession({ userId: USER });

    const error = await rejectionOf(s.invoke("stuck"));
    expect(error).toBeInstanceOf(ToolTimeoutError);
    expect(error.code).toBe("TOOL_TIMEOUT");
    expect(error).toMatchObject({ tool: "stuck", step: "run", timeoutMs: 20 });
    expect(seen!.aborted).toBe(true);
    expect(seen!.reason).toBe(error);

    const [call] = await s.toolTrack();
    expect(call!.status).toBe("failed");
    expect(call!.applied).toBe(false);
    expect(call!.error).toEqual({ name: "ToolTimeoutError", message: error.message });
    // The session goes on.
    expect(await s.append({ role: "user", content: "next" })).toHaveLength(1);
  });

  it("writes nothing when the handler completes late", async () => {
    const late = deferred<{ late: true }>();
    const { dir, dbPath, fp } = world([defineTool({ name: "late", timeoutMs: 20, run: () => late.promise })]);
    const s = await fp.createSession({ userId: USER });
    expect((await rejectionOf(s.invoke("late"))).code).toBe("TOOL_TIMEOUT");
    const before = await dumpOf(dbPath);
    late.resolve({ late: true });
    await late.promise;
    await new Promise((r) => setImmediate(r));
    expect(await dumpOf(dbPath)).toEqual(before);
    expect((await s.toolTrack())[0]!.result).toBeNull();
    expect(fs.existsSync(dir)).toBe(true);
  });
});

describe("an undo that hangs", () => {
  async function hungOver(onUndoError?: "stop" | "continue") {
    const control = { hangUndo: false };
    const signals: AbortSignal[] = [];
    const { dir, fp } = world([writeFileTool(), hangingWrite(control, signals)]);
    const s = await fp.createSession({ userId: USER });
    const cp = await s.checkpoint();
    const a = path.join(dir, "a.txt");
    const b = path.join(dir, "b.txt");
    await s.invoke("write_file", { path: a, text: "A" });
    await s.invoke("slow_write", { path: b, text: "B" });
    control.hangUndo = true;
    const root = (await s.info()).currentBranchId;
    const attempt = s.rollback(cp.id, onUndoError ? { onUndoError } : undefined);
    return { s, cp, a, b, root, control, signals, attempt, fp };
  }

  it("under stop: a failed step naming the timeout; nothing else moves, and the session is not blocked", async () => {
    const { s, cp, a, b, root, control, signals, attempt } = await hungOver();
    const error = await rejectionOf(attempt);
    expect(error).toBeInstanceOf(ToolUndoError);
    expect(error.code).toBe("UNDO_FAILED");
    expect(error.cause).toBeInstanceOf(ToolTimeoutError);
    expect(error.cause).toMatchObject({ code: "TOOL_TIMEOUT", step: "undo", tool: "slow_write" });
    expect(error.message).toContain("did not finish within 30 ms");
    expect(signals.at(-1)!.aborted).toBe(true);
    expect((await s.info()).currentBranchId).toBe(root);
    expect([readOrNull(a), readOrNull(b)]).toEqual(["A", "B"]);

    // Not blocked: calls go on, and the move can be called again once the undo behaves.
    await s.append({ role: "user", content: "still here" });
    control.hangUndo = false;
    const moved = await s.rollback(cp.id);
    expect(moved.undone.map((t) => t.tool)).toEqual(["slow_write", "write_file"]);
    expect([readOrNull(a), readOrNull(b)]).toEqual([null, null]);
  });

  it("under continue: reported as failed with the timeout, the other undos done and the move finished", async () => {
    const { s, a, b, root, attempt } = await hungOver("continue");
    const moved = await attempt;
    expect(moved.branch.id).not.toBe(root);
    expect(moved.undone.map((t) => t.tool)).toEqual(["write_file"]);
    expect(moved.failed).toHaveLength(1);
    expect(moved.failed[0]!.step).toBe("undo");
    expect(moved.failed[0]!.invocation.tool).toBe("slow_write");
    expect(moved.failed[0]!.error).toContain("did not finish within 30 ms");
    expect([readOrNull(a), readOrNull(b)]).toEqual([null, "B"]);
  });

  it("a hanging replay is a failed replay step (REPLAY_FAILED, cause TOOL_TIMEOUT)", async () => {
    const control = { hangReplay: false };
    const { dir, fp } = world([hangingWrite(control, [])]);
    const s = await fp.createSession({ userId: USER });
    const cp = await s.checkpoint();
    await s.invoke("slow_write", { path: path.join(dir, "r.txt"), text: "R" });
    const root = (await s.info()).currentBranchId;
    await s.rollback(cp.id);
    control.hangReplay = true;
    const error = await rejectionOf(s.switchBranch(root));
    expect(error).toBeInstanceOf(ToolReplayError);
    expect(error.cause).toMatchObject({ code: "TOOL_TIMEOUT", step: "replay" });
  });
});

describe("closing the forkpoint", () => {
  it("aborts a running handler's signal; invoke rejects and the call is left unknown, as a crash leaves it", async () => {
    const sawAbort = deferred<unknown>();
    const running = deferred<void>();
    const { dbPath, fp } = world([
      defineTool({
        name: "waits_for_abort",
        run: (_a, ctx) =>
          new Promise<null>((_, reject) => {
            ctx.signal.addEventListener("abort", () => {
              sawAbort.resolve(ctx.signal.reason);
              reject(new Error("aborted by close"));
            });
            running.resolve();
          }),
      }),
    ]);
    const s = await fp.createSession({ userId: USER });
    const started = s.invoke("waits_for_abort");
    const outcome = rejectionOf(started);
    // Closed while the handler runs (its start is journaled first: a write, asynchronous on some stores).
    await running.promise;
    await fp.close();

    const reason = await sawAbort.promise;
    expect(reason).toBeInstanceOf(DatabaseError);
    expect((reason as DatabaseError).code).toBe("CLOSED");
    expect(await outcome).toBe(reason);

    const reopened = openForkpoint({ path: dbPath });
    opened.push(reopened);
    const [call] = await (await reopened.getSession(s.id, { userId: USER })).toolTrack();
    // The handler rejected after its signal aborted: whether it had done anything by then is not known.
    expect(call!.status).toBe("running");
    expect((await reopened.recover()).unknown.map((c) => c.id)).toEqual([call!.id]);
  });

  it("does not wait for a handler that ignores its signal", async () => {
    const { fp } = world([defineTool({ name: "deaf", run: () => never() })]);
    const s = await fp.createSession({ userId: USER });
    const outcome = rejectionOf(s.invoke("deaf"));
    await new Promise((r) => setImmediate(r));
    await fp.close();
    expect((await outcome).code).toBe("CLOSED");
  });

  it("waits for a recover() running a handler, which leaves its move to the next recovery, the step unknown", async () => {
    const control = { hangUndo: false };
    const signals: AbortSignal[] = [];
    const { dir, dbPath, fp } = world([hangingWrite(control, signals)]);
    const s = await fp.createSession({ userId: USER });
    const cp = await s.checkpoint();
    await s.invoke("slow_write", { path: path.join(dir, "a.txt"), text: "A" });
    control.hangUndo = true;
    // A move journaled, then left with its step pending by a thread that is gone (made from one its undo's time limit stopped).
    expect(await rejectionOf(s.rollback(cp.id))).toBeInstanceOf(ToolUndoError);
    await fp.close();
    await sqlOn(dbPath, `UPDATE moves SET status = 'running', finished_at = NULL, pid = $1, pid_start = NULL`, [process.pid]);
    await sqlOn(dbPath, `UPDATE move_steps SET status = 'pending', error = NULL`);
    await expireLeases(dbPath);

    const reopened = openForkpoint({ path: dbPath, tools: [hangingWrite(control, signals, 60_000)], recover: false });
    opened.push(reopened);
    const recovering = reopened.recover();
    while (signals.length < 3) await new Promise((r) => setTimeout(r, 1));
    await reopened.close();
    // Closed while the undo ran: the move is left as a crash there leaves it, its step running.
    const report = await recovering;
    expect(report.failed).toHaveLength(1);
    expect(report.failed[0]!.error).toMatchObject({ code: "CLOSED" });
    expect(await rows(dbPath, `SELECT status FROM moves`)).toEqual([{ status: "running" }]);
    expect(await rows(dbPath, `SELECT status FROM move_steps`)).toEqual([{ status: "running" }]);

    // The next recovery reports that undo unknown and does not run it again.
    const third = openForkpoint({ path: dbPath, tools: [hangingWrite(control, signals, 60_000)], recover: false });
    opened.push(third);
    const again = await third.recover();
    expect(again.resumed).toHaveLength(1);
    expect(again.unknown.map((c) => c.tool)).toEqual(["slow_write"]);
    expect(signals).toHaveLength(3);
  });

  it("stops a move at its running step even under continue, leaving that step to recovery", async () => {
    const control = { hangUndo: false };
    const signals: AbortSignal[] = [];
    const { dir, fp } = world([writeFileTool(), hangingWrite(control, signals, 60_000)]);
    const s = await fp.createSession({ userId: USER });
    const cp = await s.checkpoint();
    const a = path.join(dir, "a.txt");
    await s.invoke("write_file", { path: a, text: "A" });
    await s.invoke("slow_write", { path: path.join(dir, "b.txt"), text: "B" });
    control.hangUndo = true;
    const attempt = rejectionOf(s.rollback(cp.id, { onUndoError: "continue" }));
    while (signals.length < 2) await new Promise((r) => setTimeout(r, 1));
    await fp.close();
    const error = await attempt;
    expect(error).toBeInstanceOf(DatabaseError);
    expect(error.code).toBe("CLOSED");
    // The step after it never started.
    expect(readOrNull(a)).toBe("A");
  });
});
