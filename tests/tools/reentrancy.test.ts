// Tool handlers calling back into their own session: what would wait on itself is refused at once (REENTRANT_CALL);
// what a plain call's run does to its own session runs; other sessions are unaffected.
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  ConflictError,
  ToolUndoError,
  defineTool,
  type Forkpoint,
  type MoveResult,
  type RecoveryReport,
  type SessionHandle,
  type ToolDefinition,
  type ToolInvocation,
} from "../../src/index.js";
import { readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { ids } from "../fixtures/harness.js";
import { rejectionOf } from "../helpers.js";
import { dumpOf, expireLeases, openForkpoint, sqlOn } from "../fixtures/backend.js";

const USER = "erin";
const opened: Forkpoint[] = [];
afterEach(async () => {
  for (const fp of opened.splice(0)) await fp.close().catch(() => undefined);
});

/** What a test's handlers reach: the handle they call back into, set once the session exists. */
interface Hooks {
  s?: SessionHandle;
  other?: SessionHandle;
}

function world(tools: ToolDefinition[]) {
  const dir = tempDir("forkpoint-reentry-");
  const dbPath = path.join(dir, "forkpoint.db");
  const fp = openForkpoint({ path: dbPath, tools: [writeFileTool(), ...tools] });
  opened.push(fp);
  return { dir, dbPath, fp };
}

/** A reversible tool that writes a file, and whose undo first runs `duringUndo` (its outcome kept in `seen`). */
function callingBackOnUndo(duringUndo: () => Promise<unknown>, seen: unknown[]): ToolDefinition {
  return defineTool<{ path: string }, null>({
    name: "noisy_write",
    run: ({ path: p }) => {
      fs.writeFileSync(p, "noisy");
      return null;
    },
    undo: async ({ args }) => {
      seen.push(
        await duringUndo().then(
          (v) => v,
          (e: unknown) => e,
        ),
      );
      fs.rmSync(args.path, { force: true });
    },
  });
}

describe("an undo that calls back into its own session", () => {
  it("appending is refused at once: the append lands nowhere and the undo goes on", async () => {
    const hooks: Hooks = {};
    const seen: unknown[] = [];
    const { dir, fp } = world([callingBackOnUndo(() => hooks.s!.append({ role: "note", content: "from undo" }), seen)]);
    const s = (hooks.s = await fp.createSession({ userId: USER }));
    const cp = await s.checkpoint();
    const f = path.join(dir, "f.txt");
    await s.invoke("noisy_write", { path: f });
    const root = (await s.info()).currentBranchId;

    const moved = await s.rollback(cp.id);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(ConflictError);
    expect((seen[0] as ConflictError).code).toBe("REENTRANT_CALL");
    expect((seen[0] as ConflictError).message).toContain('the undo handler of tool "noisy_write"');
    expect(moved.undone).toHaveLength(1);
    expect(readOrNull(f)).toBeNull();
    // Neither the branch left nor the new one got the message.
    expect(await s.history({ branchId: root })).toEqual([]);
    expect(await s.history()).toEqual([]);
    // The session works as usual afterwards.
    expect(await s.append({ role: "user", content: "after" })).toHaveLength(1);
  });

  it("an invoke (or a move) of its own session from an undo is refused; an undo that lets it throw is a failed step", async () => {
    const hooks: Hooks = {};
    const seen: unknown[] = [];
    const throwing = defineTool<{ path: string }, null>({
      name: "strict_write",
      run: ({ path: p }) => (fs.writeFileSync(p, "x"), null),
      undo: async () => {
        await hooks.s!.invoke("write_file", { path: "/nonexistent/never", text: "never" });
      },
    });
    const { dir, dbPath, fp } = world([throwing, callingBackOnUndo(async () => hooks.s!.switchBranch("br_whatever"), seen)]);
    const s = (hooks.s = await fp.createSession({ userId: USER }));
    const cp = await s.checkpoint();
    await s.invoke("noisy_write", { path: path.join(dir, "n.txt") });
    await s.invoke("strict_write", { path: path.join(dir, "s.txt") });
    const root = (await s.info()).currentBranchId;
    const rowsBefore = (await dumpOf(dbPath)).entries!.length;

    const error = await rejectionOf(s.rollback(cp.id));
    expect(error).toBeInstanceOf(ToolUndoError);
    expect(error.cause).toBeInstanceOf(ConflictError);
    expect(error.cause.code).toBe("REENTRANT_CALL");
    expect(error.cause.message).toMatch(/^a call on session .* from inside the undo handler of tool "strict_write"/);
    // Stopped before anything moved on: same branch, no entry written by the refused invoke.
    expect((await s.info()).currentBranchId).toBe(root);
    expect((await dumpOf(dbPath)).entries).toHaveLength(rowsBefore);

    // Continuing past it: the other undo's switchBranch is refused too, and the move finishes.
    const moved = await s.rollback(cp.id, { onUndoError: "continue" });
    expect(moved.failed.map((f) => f.invocation.tool)).toEqual(["strict_write"]);
    expect(seen).toHaveLength(1);
    expect((seen[0] as ConflictError).code).toBe("REENTRANT_CALL");
    expect((seen[0] as ConflictError).message).toContain('the undo handler of tool "noisy_write"');
  });

  it("a different session stays usable from inside an undo", async () => {
    const hooks: Hooks = {};
    const seen: unknown[] = [];
    const { dir, fp } = world([
      callingBackOnUndo(async () => {
        await hooks.other!.append({ role: "note", content: "undo ran" });
        return hooks.other!.invoke("write_file", { path: path.join(dir, "other.txt"), text: "o" });
      }, seen),
    ]);
    const s = (hooks.s = await fp.createSession({ userId: USER }));
    hooks.other = await fp.createSession({ userId: USER });
    const cp = await s.checkpoint();
    await s.invoke("noisy_write", { path: path.join(dir, "n.txt") });
    await s.rollback(cp.id);
    expect(seen).toEqual([{ previous: null }]);
    expect((await hooks.other.history()).map((m) => m.content)).toEqual(["undo ran"]);
    expect(readOrNull(path.join(dir, "other.txt"))).toBe("o");
  });
});

describe("a run that calls back into its own session", () => {
  /** A tool whose run performs `during(s)` on its own session and returns what happened. */
  function selfCalling(during: (s: SessionHandle) => Promise<unknown>, hooks: Hooks): ToolDefinition {
    return defineTool({
      name: "self_call",
      run: async () => {
        const outcome = await during(hooks.s!).then(
          () => "ok",
          (e: { code?: string }) => e.code ?? "error",
        );
        return { outcome };
      },
      undo: () => {},
    });
  }

  it.each([
    ["rollback", (s: SessionHandle, ids: { cp: string; branch: string; msg: string }) => s.rollback(ids.cp)],
    ["switchBranch", (s: SessionHandle, ids: { cp: string; branch: string; msg: string }) => s.switchBranch(ids.branch)],
    ["edit", (s: SessionHandle, ids: { cp: string; branch: string; msg: string }) => s.edit(ids.msg, { role: "user", content: "again" })],
  ])("%s of its own session is refused at once; the call completes", async (_name, move) => {
    const hooks: Hooks = {};
    const target = { cp: "", branch: "", msg: "" };
    const { fp } = world([selfCalling((s) => move(s, target), hooks)]);
    const s = (hooks.s = await fp.createSession({ userId: USER }));
    const [msg] = await s.append({ role: "user", content: "hi" });
    target.msg = msg!.id;
    target.cp = (await s.checkpoint()).id;
    target.branch = (await s.info()).currentBranchId;

    expect(await s.invoke("self_call")).toEqual({ outcome: "REENTRANT_CALL" });
    expect((await s.info()).currentBranchId).toBe(target.branch);
    expect((await s.toolTrack()).map((t) => t.status)).toEqual(["succeeded"]);
  });

  it("deleting its own session is refused too", async () => {
    const hooks: Hooks = {};
    let fp!: Forkpoint;
    ({ fp } = world([selfCalling((s) => fp.deleteSession(s.id, { userId: USER }), hooks)]));
    const s = (hooks.s = await fp.createSession({ userId: USER }));
    expect(await s.invoke("self_call")).toEqual({ outcome: "REENTRANT_CALL" });
    expect((await s.info()).id).toBe(s.id);
  });

  it("fp.recover() of a move of its own session is refused, naming recover", async () => {
    const hooks: Hooks = {};
    let fp!: Forkpoint;
    let dbPath = "";
    const control = { failUndo: true };
    const flaky = defineTool({
      name: "flaky",
      run: () => null,
      undo: () => {
        if (control.failUndo) throw new Error("cannot undo yet");
      },
    });
    let report: RecoveryReport | undefined;
    ({ fp, dbPath } = world([
      flaky,
      selfCalling(async () => {
        // The stopped move as a thread that died mid-move leaves it.
        await sqlOn(dbPath, `UPDATE moves SET status = 'running', finished_at = NULL, pid = $1, pid_start = NULL`, [process.pid]);
        await expireLeases(dbPath);
        report = await fp.recover();
      }, hooks),
    ]));
    const s = (hooks.s = await fp.createSession({ userId: USER }));
    const cp = await s.checkpoint();
    await s.invoke("flaky");
    expect(await rejectionOf(s.rollback(cp.id))).toBeInstanceOf(ToolUndoError);
    expect(await s.invoke("self_call")).toEqual({ outcome: "ok" });
    expect(report!.failed).toHaveLength(1);
    expect(report!.failed[0]!.error).toMatchObject({ code: "REENTRANT_CALL" });
    expect(report!.failed[0]!.error.message).toMatch(/^recover on session .* from inside the run handler of tool "self_call"/);
  });

  it("appends and invokes on its own session run, landing on the current branch after the call", async () => {
    const hooks: Hooks = {};
    const { dir, fp } = world([
      selfCalling(async (s) => {
        await s.append({ role: "tool-log", content: "inside" });
        await s.invoke("write_file", { path: path.join(dir, "inner.txt"), text: "inner" });
      }, hooks),
    ]);
    const s = (hooks.s = await fp.createSession({ userId: USER }));
    const cp = await s.checkpoint();
    expect(await s.invoke("self_call")).toEqual({ outcome: "ok" });
    const track = await s.toolTrack();
    expect(track.map((t) => t.tool)).toEqual(["self_call", "write_file"]);
    const [message] = await s.history();
    expect(message!.position).toBe(track[0]!.position + 1);
    expect(track[1]!.position).toBe(track[0]!.position + 2);
    // Both are on the track like any call: a rollback undoes them, in reverse order of completion (the inner one
    // completed first).
    const moved = await s.rollback(cp.id);
    expect(ids(moved.undone)).toEqual([track[0]!.id, track[1]!.id]);
    expect(readOrNull(path.join(dir, "inner.txt"))).toBeNull();
  });

  it("a move its run leaves in a timer runs once the call is done: the handler's context outlives it, not its refusals", async () => {
    const hooks: Hooks = {};
    const target = { cp: "" };
    let later!: Promise<MoveResult>;
    let fired!: () => void;
    const timerFired = new Promise<void>((r) => (fired = r));
    const { fp } = world([
      defineTool({
        name: "schedules",
        undo: () => {},
        run: () => {
          // AsyncLocalStorage carries the run's context into the timer; the run has returned by the time it fires.
          setTimeout(() => {
            later = hooks.s!.rollback(target.cp);
            fired();
          });
          return null;
        },
      }),
    ]);
    const s = (hooks.s = await fp.createSession({ userId: USER }));
    target.cp = (await s.checkpoint()).id;
    await s.invoke("schedules");
    await timerFired;
    const moved = await later;
    expect(moved.undone.map((t) => t.tool)).toEqual(["schedules"]);
  });

  it("an event listener's move, on an event its nested call emits, waits for the call instead of being refused", async () => {
    const hooks: Hooks = {};
    const failing = defineTool({
      name: "failing",
      undo: () => {},
      run: (): null => {
        throw new Error("no luck");
      },
    });
    const { fp } = world([failing, selfCalling((s) => s.invoke("failing"), hooks)]);
    const s = (hooks.s = await fp.createSession({ userId: USER }));
    const cp = await s.checkpoint();
    // An app's auto-heal: a failed call rolls the session back. The listener is not the handler: nothing awaits it.
    const healing: Promise<MoveResult>[] = [];
    fp.on("tool", (t: ToolInvocation) => {
      if (t.status === "failed") healing.push(s.rollback(cp.id));
    });
    expect(await s.invoke("self_call")).toEqual({ outcome: "error" });
    expect(healing).toHaveLength(1);
    const moved = await healing[0]!;
    // It ran once the call had completed: the call is on the branch it left, and undone.
    expect(moved.undone.map((t) => t.tool)).toEqual(["self_call"]);
    expect((await s.info()).currentBranchId).toBe(moved.branch.id);
  });

  it("its own invoke joins the running call even when a move was queued meanwhile (no deadlock)", async () => {
    const hooks: Hooks = {};
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const { dir, fp } = world([
      selfCalling(async (s) => {
        started();
        await gate; // a rollback is queued behind this call by now
        await s.invoke("write_file", { path: path.join(dir, "late.txt"), text: "late" });
      }, hooks),
    ]);
    const s = (hooks.s = await fp.createSession({ userId: USER }));
    const cp = await s.checkpoint();
    const call = s.invoke("self_call");
    await running;
    const rollback = s.rollback(cp.id);
    release();
    expect(await call).toEqual({ outcome: "ok" });
    const moved = await rollback;
    // The move waited for the call and its inner call, then undid both.
    expect(moved.undone.map((t) => t.tool)).toEqual(["self_call", "write_file"]);
    expect(readOrNull(path.join(dir, "late.txt"))).toBeNull();
  });
});
