// Tool calls and moves running at the same time, in one process and across two openers of one file, and tool
// results that are not plain JSON: the world never ends up off the current lineage and nothing runs twice.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConflictError, defineTool, type Forkpoint, type SessionHandle, type ToolDefinition } from "../../src/index.js";
import { openForkpoint } from "../fixtures/backend.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Set by a test: `set`'s undo tells it has started, then waits for the test's go-ahead. */
let undoHeld: { started: () => void; release: Promise<void> } | undefined;

/** An in-memory world; `set` records key=true, slowly if asked; its undo deletes the key. */
function worldTools(world: Set<string>, log: string[]): ToolDefinition[] {
  return [
    defineTool({
      name: "set",
      run: async ({ key, delay }: { key: string; delay?: number }) => {
        if (delay) await sleep(delay);
        world.add(key);
        log.push(`run ${key}`);
        return { key };
      },
      undo: async ({ args }: { args: { key: string; delay?: number }; result: unknown }) => {
        const held = undoHeld;
        if (held) {
          held.started();
          await held.release;
        }
        if (args.delay) await sleep(args.delay);
        world.delete(args.key);
        log.push(`undo ${args.key}`);
      },
    }),
    defineTool({
      name: "stamp",
      run: async (_args: unknown, ctx) => {
        world.add(`stamp${ctx.replay ? "-replay" : ""}`);
        log.push(`run stamp${ctx.replay ? " (replay)" : ""}`);
        return new Date(0) as unknown as string; // not JSON: recorded as JSON.stringify writes it
      },
      undo: async () => {
        world.delete("stamp");
        world.delete("stamp-replay");
        log.push("undo stamp");
      },
    }),
    defineTool({ name: "noargs", run: async (args: unknown) => ({ got: args as never }) }),
  ];
}

let dir: string;
let opened: Forkpoint[];
let world: Set<string>;
let log: string[];
const open = () => {
  const fp = openForkpoint({ path: join(dir, "db.sqlite"), tools: worldTools(world, log) });
  opened.push(fp);
  return fp;
};
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "forkpoint-together-"));
  opened = [];
  world = new Set();
  log = [];
});
afterEach(async () => {
  for (const fp of opened) await fp.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The world holds exactly the applied calls of the current lineage. */
async function expectWorldMatchesLineage(s: SessionHandle): Promise<void> {
  const applied = (await s.toolTrack()).filter((t) => t.applied).map((t) => (t.args as { key: string }).key);
  expect([...world].sort()).toEqual(applied.sort());
}

describe("a tool call and a move on one session at the same time", () => {
  it("never leaves the world off the current lineage, whichever runs first", async () => {
    for (const lateFirst of [false, true]) {
      world.clear();
      const fp = open();
      const s = await fp.createSession({ userId: "u" });
      const cp = await s.checkpoint();
      await s.invoke("set", { key: "a" });
      const late = s.invoke("set", { key: "late", delay: 30 });
      const move = lateFirst ? sleep(5).then(() => s.rollback(cp.id)) : s.rollback(cp.id);
      await Promise.all([late, move]);
      await expectWorldMatchesLineage(s);
      expect(world.has("a")).toBe(false);
    }
  });
});

/** A session with a checkpoint, then a call of `set` (its undo takes `delay` ms), seen through two openers of the file. */
async function calledOnTwoOpeners(delay: number) {
  const first = open();
  const s1 = await first.createSession({ userId: "u" });
  const cp = await s1.checkpoint();
  await s1.invoke("set", { key: "x", delay });
  const s2 = await open().getSession(s1.id, { userId: "u" });
  return { first, s1, cp, s2 };
}

describe("two openers of one file moving one session at once", () => {
  it("undo each call once: the second move is refused while the first is under way", async () => {
    const { s1, cp, s2 } = await calledOnTwoOpeners(20);
    const outcomes = await Promise.allSettled([s1.rollback(cp.id), sleep(5).then(() => s2.rollback(cp.id))]);
    expect(log.filter((l) => l === "undo x")).toHaveLength(1);
    // Whichever opener claims the move first (a loaded machine may start the later one first), the other is refused.
    expect(outcomes.map((o) => o.status).sort()).toEqual(["fulfilled", "rejected"]);
    const error = (outcomes.find((o) => o.status === "rejected") as PromiseRejectedResult).reason;
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.code).toBe("MOVE_IN_PROGRESS");
    // Once the first move is done, the same rollback goes through and has nothing left to undo.
    const again = await (outcomes[0].status === "rejected" ? s1 : s2).rollback(cp.id);
    expect(again.undone).toEqual([]);
    expect(world.size).toBe(0);
  });
});

describe("two openers of one file: a tool call and a move or a delete at once", () => {
  it("a call made while the other opener's move runs its undos is refused (MOVE_IN_PROGRESS), not journaled on the branch being left", async () => {
    const { first, s1, cp, s2 } = await calledOnTwoOpeners(30);
    // The call is made once the undo runs, and the undo goes on once the call has its answer: no timing assumed.
    let started!: () => void;
    let release!: () => void;
    const undoing = new Promise<void>((r) => (started = r));
    undoHeld = { started, release: new Promise<void>((r) => (release = r)) };
    const call = undoing.then(() => s2.invoke("set", { key: "during" })).finally(() => release());
    const [moved, called] = await Promise.allSettled([s1.rollback(cp.id), call]).finally(() => (undoHeld = undefined));
    expect(moved.status).toBe("fulfilled");
    expect((called as PromiseRejectedResult).reason).toMatchObject({ code: "MOVE_IN_PROGRESS" });
    expect(world.has("during")).toBe(false);
    await expectWorldMatchesLineage(s1);
    expect(await first.verify()).toMatchObject({ ok: true });
  });

  it("a call whose session the other opener deleted while the tool ran fails with NotFoundError (not a raw SQLite error)", async () => {
    // The tool runs until the other opener's delete is done: the order does not hang on timing.
    let started!: () => void;
    let release!: () => void;
    let running = new Promise<void>((r) => (started = r));
    let gate = new Promise<void>((r) => (release = r));
    const gated = defineTool({
      name: "gated",
      run: async ({ fail }: { fail?: boolean }) => {
        started();
        await gate;
        if (fail) throw new Error("nothing done");
        return { ok: true };
      },
    });
    const first = openForkpoint({ path: join(dir, "db.sqlite"), tools: [gated] });
    opened.push(first);
    const s1 = await first.createSession({ userId: "u" });
    const s2 = await first.createSession({ userId: "u" });
    const second = open();
    const called = s1.invoke("gated", {});
    called.catch(() => undefined);
    await running;
    await second.deleteSession(s1.id, { userId: "u" });
    release();
    await expect(called).rejects.toMatchObject({
      name: "NotFoundError",
      code: "NOT_FOUND",
      message: expect.stringContaining("ran, whose effect happened, and is recorded nowhere"),
    });
    // A tool that failed meanwhile: its own error is said, and kept as the cause.
    running = new Promise<void>((r) => (started = r));
    gate = new Promise<void>((r) => (release = r));
    const failing = s2.invoke("gated", { fail: true });
    failing.catch(() => undefined);
    await running;
    await second.deleteSession(s2.id, { userId: "u" });
    release();
    const e = await failing.then(
      () => null,
      (err: Error) => err,
    );
    expect(e).toMatchObject({ code: "NOT_FOUND", message: expect.stringContaining("which failed (nothing done)") });
    expect((e!.cause as Error).message).toBe("nothing done");
    expect(await first.verify()).toMatchObject({ ok: true, sessions: 0 });
  });
});

describe("tool results that are not plain JSON", () => {
  it("a call whose run returned a Date succeeded: recorded as JSON writes it, applied, and undone by a rollback", async () => {
    const s = await open().createSession({ userId: "u" });
    const cp = await s.checkpoint();
    expect(await s.invoke("stamp", {})).toEqual(new Date(0));
    const [call] = await s.toolTrack();
    expect([call!.status, call!.applied, call!.result]).toEqual(["succeeded", true, "1970-01-01T00:00:00.000Z"]);
    expect((await s.rollback(cp.id)).undone.map((t) => t.tool)).toEqual(["stamp"]);
    expect(world.size).toBe(0);
  });

  it("a replay that returns a Date is done once, not retried", async () => {
    const s = await open().createSession({ userId: "u" });
    const root = (await s.info()).currentBranchId;
    const cp = await s.checkpoint();
    await s.invoke("stamp", {});
    await s.rollback(cp.id);
    const back = await s.switchBranch(root);
    expect(back.replayed.map((t) => t.tool)).toEqual(["stamp"]);
    expect(log.filter((l) => l === "run stamp (replay)")).toHaveLength(1);
    await s.switchBranch(root);
    expect(log.filter((l) => l === "run stamp (replay)")).toHaveLength(1);
  });
});

describe("invoke without args", () => {
  it("passes {} to the tool", async () => {
    const s = await open().createSession({ userId: "u" });
    expect(await s.invoke("noargs")).toEqual({ got: {} });
  });
});
