// close() while a tool's run or a move's undo runs leaves it as a crash at that point would: its outcome unknown, never
// recorded as failed (the handler goes on), never run again by the next move, and settled with resolveToolCall.
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DatabaseError, defineTool, type Forkpoint, type ToolDefinition } from "../../src/index.js";
import { tempDir } from "../fixtures/file-tools.js";
import { rejectionOf } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

const USER = "cy";
const opened: Forkpoint[] = [];
afterEach(async () => {
  for (const fp of opened.splice(0)) await fp.close().catch(() => undefined);
});

function open(dbPath: string, tools: ToolDefinition[]): Forkpoint {
  const fp = openForkpoint({ path: dbPath, tools });
  opened.push(fp);
  return fp;
}

/** A promise to settle by hand. */
function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe("close() while a handler runs", () => {
  it("leaves an undo it interrupted unknown: the next move does not run it again", async () => {
    const dir = tempDir("forkpoint-close-undo-");
    const dbPath = path.join(dir, "forkpoint.db");
    const log: string[] = [];
    const undoStarted = deferred();
    const letUndoEnd = deferred();
    const undoEnded = deferred();
    const tool = defineTool<{ t: string }, string>({
      name: "u",
      run: ({ t }) => t,
      // B's first undo waits for the test (ignoring its signal), then finishes: its effect happens after the close.
      undo: async ({ args }) => {
        log.push(`undo-start ${args.t}`);
        if (args.t === "B" && log.filter((l) => l === "undo-start B").length === 1) {
          undoStarted.resolve();
          await letUndoEnd.promise;
        }
        log.push(`undo-end ${args.t}`);
        if (args.t === "B") undoEnded.resolve();
      },
    });
    const fp = open(dbPath, [tool]);
    const s = await fp.createSession({ userId: USER });
    const cp = await s.checkpoint();
    await s.invoke("u", { t: "A" });
    await s.invoke("u", { t: "B" });
    const [, callB] = await s.toolTrack();
    const moving = rejectionOf(s.rollback(cp.id));
    await undoStarted.promise;
    await fp.close();
    const closedError: unknown = await moving;
    letUndoEnd.resolve();
    await undoEnded.promise;

    const reopened = open(dbPath, [tool]);
    const s2 = await reopened.getSession(s.id, { userId: USER });
    await s2.rollback(cp.id);
    // B's undo ran once (the closed handle's), A's once (the interrupted move, finished).
    expect(log.filter((l) => l === "undo-start B")).toHaveLength(1);
    expect(log.filter((l) => l === "undo-start A")).toHaveLength(1);
    // The rollback the close cut short learned that, not that the undo failed.
    expect(closedError).toBeInstanceOf(DatabaseError);
    expect(closedError).toMatchObject({ code: "CLOSED" });
    // Its step is unknown until someone says what became of it.
    expect((await reopened.recover()).unknown.map((c) => c.id)).toEqual([callB!.id]);
    // It finished: B is undone.
    expect(await s2.resolveToolCall(callB!.id, { status: "succeeded", result: null })).toMatchObject({ applied: false });
    expect((await reopened.recover()).unknown).toEqual([]);
  });

  it("leaves a run it interrupted unknown, not failed; resolveToolCall settles it and moves undo it then", async () => {
    const dir = tempDir("forkpoint-close-run-");
    const dbPath = path.join(dir, "forkpoint.db");
    const file = path.join(dir, "effect.txt");
    const running = deferred();
    const letRunEnd = deferred();
    const ran = deferred();
    const tool = defineTool<Record<string, never>, string>({
      name: "slow",
      // Writes its file once the test lets it, whatever its signal says: the effect happens after the close.
      run: async () => {
        running.resolve();
        await letRunEnd.promise;
        fs.writeFileSync(file, "effect");
        ran.resolve();
        return "done";
      },
      undo: () => fs.rmSync(file, { force: true }),
    });
    const fp = open(dbPath, [tool]);
    const s = await fp.createSession({ userId: USER });
    const cp = await s.checkpoint();
    const invoking = rejectionOf(s.invoke("slow", {}));
    await running.promise;
    await fp.close();
    expect(await invoking).toMatchObject({ code: "CLOSED" });
    letRunEnd.resolve();
    await ran.promise;
    expect(fs.readFileSync(file, "utf8")).toBe("effect");

    const reopened = open(dbPath, [tool]);
    const s2 = await reopened.getSession(s.id, { userId: USER });
    const [call] = await s2.toolTrack();
    // Left running by a handle that is gone: unknown, as after a crash (no error recorded for it).
    expect(call!.status).toBe("running");
    expect(call!.error).toBeNull();
    expect((await reopened.recover()).unknown.map((c) => c.id)).toEqual([call!.id]);
    const resolved = await s2.resolveToolCall(call!.id, { status: "succeeded", result: "done" });
    expect(resolved).toMatchObject({ status: "succeeded", applied: true });
    const moved = await s2.rollback(cp.id);
    expect(moved.undone.map((c) => c.id)).toEqual([call!.id]);
    expect(fs.existsSync(file)).toBe(false);
  });

  it("leaves a move it reaches before any handler started journaled, as a crash there would: not a failed undo", async () => {
    const dir = tempDir("forkpoint-close-before-undo-");
    const dbPath = path.join(dir, "forkpoint.db");
    const log: string[] = [];
    const tool = defineTool<{ t: string }, string>({ name: "u", run: ({ t }) => t, undo: ({ args }) => void log.push(`undo ${args.t}`) });
    const fp = open(dbPath, [tool]);
    const s = await fp.createSession({ userId: USER });
    const cp = await s.checkpoint();
    await s.invoke("u", { t: "A" });
    await s.invoke("u", { t: "B" });
    // The close lands as the move starts: it is journaled, and no handler has run yet.
    const moving = rejectionOf(s.rollback(cp.id));
    await fp.close();
    expect(await moving).toMatchObject({ name: "DatabaseError", code: "CLOSED" });
    expect(log).toEqual([]);

    // The next opener finishes it, each undo once; nothing is unknown.
    const reopened = open(dbPath, [tool]);
    const s2 = await reopened.getSession(s.id, { userId: USER });
    expect((await reopened.recover()).unknown).toEqual([]);
    expect(await s2.rollback(cp.id)).toMatchObject({ undone: [], failed: [] });
    expect(log).toEqual(["undo B", "undo A"]);
    expect((await s2.branches()).length).toBe(2);
    expect(await s2.toolTrack()).toEqual([]);
  });

  it("stops a move between two steps as a crash there would: the step not started is run once by the next call", async () => {
    const dir = tempDir("forkpoint-close-between-undos-");
    const dbPath = path.join(dir, "forkpoint.db");
    const log: string[] = [];
    const tool = defineTool<{ t: string }, string>({ name: "u", run: ({ t }) => t, undo: ({ args }) => void log.push(`undo ${args.t}`) });
    const fp = open(dbPath, [tool]);
    const s = await fp.createSession({ userId: USER });
    const cp = await s.checkpoint();
    await s.invoke("u", { t: "A" });
    await s.invoke("u", { t: "B" });
    // The close lands once B's undo is recorded, before A's starts.
    let closing: Promise<void> | undefined;
    fp.on("undo", () => void (closing ??= fp.close()));
    expect(await rejectionOf(s.rollback(cp.id))).toMatchObject({ name: "DatabaseError", code: "CLOSED" });
    await closing;
    expect(log).toEqual(["undo B"]);

    const reopened = open(dbPath, [tool]);
    const s2 = await reopened.getSession(s.id, { userId: USER });
    expect((await reopened.recover()).unknown).toEqual([]);
    await s2.rollback(cp.id);
    expect(log).toEqual(["undo B", "undo A"]);
    expect(await s2.toolTrack()).toEqual([]);
  });

  it("rejects the calls and moves queued behind a move it cut short as closed, not as a move in progress, writing nothing", async () => {
    const dir = tempDir("forkpoint-close-queued-");
    const dbPath = path.join(dir, "forkpoint.db");
    const undoStarted = deferred();
    const letUndoEnd = deferred();
    const tool = defineTool<{ t: string }, string>({
      name: "u",
      run: ({ t }) => t,
      undo: async ({ args }) => {
        if (args.t !== "B") return;
        undoStarted.resolve();
        await letUndoEnd.promise;
      },
    });
    const fp = open(dbPath, [tool]);
    const s = await fp.createSession({ userId: USER });
    await s.append({ role: "user", content: "q" });
    const cp = await s.checkpoint({ name: "cp" });
    await s.invoke("u", { t: "A" });
    await s.invoke("u", { t: "B" });
    const moving = rejectionOf(s.rollback(cp.id));
    await undoStarted.promise;
    // Made while the move runs: each waits for it (this handle's order), and the close ends the wait.
    const queued = [
      rejectionOf(s.append({ role: "user", content: "queued" })),
      rejectionOf(s.setState({ queued: true })),
      rejectionOf(s.checkpoint({ name: "queued" })),
      rejectionOf(s.invoke("u", { t: "C" })),
      rejectionOf(s.rollback(cp.id)),
      rejectionOf(s.switchBranch((await s.info()).currentBranchId)),
      rejectionOf(s.undo()),
    ];
    await fp.close();
    expect(await moving).toMatchObject({ code: "CLOSED" });
    for (const error of await Promise.all(queued)) {
      expect(error).toBeInstanceOf(DatabaseError);
      expect(error).toMatchObject({ code: "CLOSED" });
    }
    letUndoEnd.resolve();

    const reopened = open(dbPath, [tool]);
    const s2 = await reopened.getSession(s.id, { userId: USER });
    const messages = [];
    for (const b of await s2.branches()) messages.push(...(await s2.history({ branchId: b.id })).map((m) => m.content));
    expect([...new Set(messages)]).toEqual(["q"]);
    expect((await reopened.listCheckpoints({ userId: USER, sessionId: s.id })).items.map((c) => c.name)).toEqual(["cp"]);
    expect(await s2.getState()).toEqual({});
  });

  it("keeps another handle of the process from writing under an undo it stopped waiting for, until that undo ends", async () => {
    const dir = tempDir("forkpoint-close-sibling-");
    const dbPath = path.join(dir, "forkpoint.db");
    const world: string[] = [];
    const undoStarted = deferred();
    const letUndoEnd = deferred();
    const undoEnded = deferred();
    const tool = defineTool<{ t: string }, string>({
      name: "u",
      run: ({ t }) => (world.push(t), t),
      // B's undo ignores its signal and ends after the close: it puts the world back as it found it then.
      undo: async ({ args }) => {
        if (args.t === "B") {
          const before = world.slice(0, world.indexOf("B"));
          undoStarted.resolve();
          await letUndoEnd.promise;
          world.splice(0, world.length, ...before);
          undoEnded.resolve();
        } else world.splice(world.indexOf(args.t), 1);
      },
    });
    const fp = open(dbPath, [tool]);
    const other = open(dbPath, [tool]);
    const s = await fp.createSession({ userId: USER });
    await s.invoke("u", { t: "A" });
    const cp = await s.checkpoint();
    await s.invoke("u", { t: "B" });
    const moving = rejectionOf(s.rollback(cp.id));
    await undoStarted.promise;
    await fp.close();
    expect(await moving).toMatchObject({ code: "CLOSED" });
    const s2 = await other.getSession(s.id, { userId: USER });
    // The undo still runs in this process: the session's move is under way here, as it is for other processes.
    expect(await rejectionOf(s2.invoke("u", { t: "C" }))).toMatchObject({ code: "MOVE_IN_PROGRESS" });
    expect(world).toEqual(["A", "B"]);
    letUndoEnd.resolve();
    await undoEnded.promise;
    await new Promise((r) => setTimeout(r, 0));
    // Ended: the other handle finishes the move (its step unknown, never run again), then its call lands after it.
    await s2.invoke("u", { t: "C" });
    expect(world).toEqual(["A", "C"]);
    expect((await other.recover()).unknown.map((c) => c.args)).toEqual([{ t: "B" }]);
  });
});
