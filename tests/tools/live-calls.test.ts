// A tool call running in another process (another app server on PostgreSQL) holds the session's moves back for as long
// as its owner may run it; once the owner is gone (killed, its lease run out) the call is what a move reports unknown.
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConflictError, defineTool, type Forkpoint, type ToolDefinition, type ToolInvocation } from "../../src/index.js";
import { dumpOf, expireLeases, openForkpoint, sqlOn } from "../fixtures/backend.js";
import { heldWriteTool, readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { startWorker } from "../fixtures/workers.js";
import type { Dump } from "../helpers.js";

const USER = "dora";
const ids = (list: ToolInvocation[]) => list.map((t) => t.id);
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

function open(dbPath: string, tools: ToolDefinition[] = [writeFileTool(), heldWriteTool()]): Forkpoint {
  const fp = openForkpoint({ path: dbPath, tools });
  cleanup.push(() => fp.close());
  return fp;
}

/**
 * A session whose world moved back and forth (so every kind of move has somewhere to go), with one write_file call
 * applied; then another process calls held_write on it and keeps that call running until told "go".
 */
async function liveCallInAnotherProcess(o: { workspace?: boolean } = {}) {
  const dir = tempDir("forkpoint-live-call-");
  cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const dbPath = path.join(dir, "forkpoint.db");
  const ws = path.join(dir, "ws");
  fs.mkdirSync(ws);
  // With a workspace, the older call writes in it; the held call always writes outside it.
  const older = path.join(o.workspace ? ws : dir, "older.txt");
  const held = path.join(dir, "held.txt");
  const fp = open(dbPath);
  const s = await fp.createSession({ userId: USER });
  if (o.workspace) await s.attachWorkspace(ws);
  const [message] = await s.append({ role: "user", content: "write two files" });
  const cp = await s.checkpoint({ name: "before" });
  await s.invoke("write_file", { path: older, text: "older" });
  const root = (await s.info()).currentBranchId;
  const other = (await s.rollback(cp.id)).branch.id;
  await s.switchBranch(root);

  const caller = startWorker("tests/fixtures/held-call.ts", [dbPath, s.id, USER, held]);
  cleanup.push(() => caller.child.kill("SIGKILL"));
  await caller.ready;
  if (readOrNull(held) !== "held") throw new Error(`the other process's call never started:\n${(await caller.done).stderr}`);
  const [olderCall, heldCall] = (await s.toolTrack()) as [ToolInvocation, ToolInvocation];
  expect([heldCall.tool, heldCall.status]).toEqual(["held_write", "running"]);
  return { fp, s, dbPath, cp, message: message!, root, other, older, held, olderCall, heldCall, caller };
}

/** The database as it stands, but for when a live call's lease runs out (its owner renews it as it likes). */
async function contents(dbPath: string): Promise<Dump> {
  const dump = await dumpOf(dbPath);
  const calls = (dump.running_calls ?? []) as Record<string, unknown>[];
  return { ...dump, running_calls: calls.map(({ lease_until: _, ...row }) => row) };
}

describe("a tool call running in another process", () => {
  it("refuses every move of its session (CALL_IN_PROGRESS) with nothing written; once it completes, a rollback undoes it", async () => {
    const { fp, s, dbPath, cp, message, other, older, held, olderCall, heldCall, caller } = await liveCallInAnotherProcess();
    const before = await contents(dbPath);
    const moves: [string, () => Promise<unknown>][] = [
      ["rollback", () => s.rollback(cp.id)],
      ["switchBranch", () => s.switchBranch(other)],
      ["edit", () => s.edit(message.id, { content: "write one file" })],
      ["undo", () => s.undo()],
    ];
    for (const [verb, move] of moves) {
      const error = await move().then(
        () => new Error(`${verb} went through`),
        (e: unknown) => e,
      );
      expect(error, verb).toBeInstanceOf(ConflictError);
      expect((error as ConflictError).code, verb).toBe("CALL_IN_PROGRESS");
      expect((error as Error).message, verb).toContain(`"held_write" ${heldCall.id}`);
    }
    expect(await contents(dbPath)).toEqual(before);
    // The older call was not undone under the newer one.
    expect([readOrNull(older), readOrNull(held)]).toEqual(["older", "held"]);
    // Nor is the live call reported as one a crash left running.
    expect((await fp.recover()).unknown).toEqual([]);

    caller.child.stdin.write("go\n");
    const { code, stdout, stderr } = await caller.done;
    expect(code, stderr).toBe(0);
    expect(stdout).toContain("done");
    // Its owner goes with its completion.
    expect(await sqlOn(dbPath, `SELECT entry_id FROM running_calls`)).toEqual([]);
    const track = await s.toolTrack();
    expect(track.map((t) => [t.id, t.status, t.applied])).toEqual([
      [olderCall.id, "succeeded", true],
      [heldCall.id, "succeeded", true],
    ]);

    const moved = await s.rollback(cp.id);
    expect({ undone: ids(moved.undone), unknown: ids(moved.unknown) }).toEqual({ undone: [heldCall.id, olderCall.id], unknown: [] });
    expect([readOrNull(older), readOrNull(held)]).toEqual([null, null]);
    expect((await fp.verify()).ok).toBe(true);
  });

  it("refuses a move that restores files too (scope files or both) before any file moves", async () => {
    const { s, dbPath, cp, older, heldCall, caller } = await liveCallInAnotherProcess({ workspace: true });
    const before = await contents(dbPath);
    for (const scope of ["files", "both"] as const) {
      await expect(s.rollback(cp.id, { scope }), scope).rejects.toMatchObject({
        name: "ConflictError",
        code: "CALL_IN_PROGRESS",
        message: expect.stringContaining(heldCall.id),
      });
      expect(readOrNull(older), scope).toBe("older");
    }
    expect(await contents(dbPath)).toEqual(before);
    caller.child.stdin.write("go\n");
    expect((await caller.done).code).toBe(0);
  });

  it("is unknown once its process is killed (and, on PostgreSQL, its lease has run out): the move goes through", async () => {
    const { fp, s, dbPath, cp, older, held, olderCall, heldCall, caller } = await liveCallInAnotherProcess();
    caller.child.kill("SIGKILL");
    await caller.done;
    await expireLeases(dbPath);

    expect(ids((await fp.recover()).unknown)).toEqual([heldCall.id]);
    const moved = await s.rollback(cp.id);
    expect({ undone: ids(moved.undone), unknown: ids(moved.unknown) }).toEqual({ undone: [olderCall.id], unknown: [heldCall.id] });
    // Its effect may or may not have happened: it is never undone automatically.
    expect([readOrNull(older), readOrNull(held)]).toEqual([null, "held"]);
  });

  it("with no owner recorded (a call started before owners were kept) is unknown, as it always was", async () => {
    const { fp, s, dbPath, cp, olderCall, heldCall, caller } = await liveCallInAnotherProcess();
    await sqlOn(dbPath, `DELETE FROM running_calls`);

    expect(ids((await fp.recover()).unknown)).toEqual([heldCall.id]);
    const moved = await s.rollback(cp.id);
    expect({ undone: ids(moved.undone), unknown: ids(moved.unknown) }).toEqual({ undone: [olderCall.id], unknown: [heldCall.id] });
    caller.child.stdin.write("go\n");
    expect((await caller.done).code).toBe(0);
  });
});

describe("a tool call running on another handle of this process", () => {
  it("refuses a move made through another handle (CALL_IN_PROGRESS) until it completes", async () => {
    const dir = tempDir("forkpoint-live-handle-");
    cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const dbPath = path.join(dir, "forkpoint.db");
    let started!: () => void;
    let release!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const gate = new Promise<void>((resolve) => (release = resolve));
    cleanup.push(() => release());
    const calls: string[] = [];
    const gated = defineTool({
      name: "gated",
      run: async ({ key }: { key: string }) => (calls.push(`run ${key}`), started(), await gate, { key }),
      undo: ({ args }: { args: { key: string } }) => void calls.push(`undo ${args.key}`),
    });
    const first = open(dbPath, [gated]);
    const second = open(dbPath, [gated]);
    const s1 = await first.createSession({ userId: USER });
    const cp = await s1.checkpoint();
    const call = s1.invoke("gated", { key: "k" });
    call.catch(() => undefined);
    await running;

    const s2 = await second.getSession(s1.id, { userId: USER });
    await expect(s2.rollback(cp.id)).rejects.toMatchObject({ name: "ConflictError", code: "CALL_IN_PROGRESS" });
    expect((await second.recover()).unknown).toEqual([]);
    release();
    await call;
    const track = await s1.toolTrack();
    expect(ids((await s2.rollback(cp.id)).undone)).toEqual(ids(track));
    expect(calls).toEqual(["run k", "undo k"]);
  });
});
