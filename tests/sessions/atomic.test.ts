// Guarded blocks and periodic checkpoints: atomic rolls state, messages and tool effects back on a throw.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { AtomicRollbackError, ValidationError, defineTool } from "../../src/index.js";
import { makeTempDir, rejectionOf, tempDatabases, writeFileTool } from "../helpers.js";

const dbs = tempDatabases();
const dir = makeTempDir();
const writeFile = writeFileTool(dir);
const failingUndo = defineTool<{ name: string }, { path: string }>({
  name: "sticky",
  run: async ({ name }) => ({ path: name }),
  undo: async () => {
    throw new Error("cannot undo");
  },
});

describe("atomic", () => {
  it("returns the block's value and keeps what it did", async () => {
    const { fp } = dbs.open({ tools: [writeFile] });
    const s = await fp.createSession({ userId: "u" });
    const value = await s.atomic(async () => {
      await s.append({ role: "user", content: "hi" });
      await s.setState({ ok: true });
      return 42;
    });
    expect(value).toBe(42);
    expect(await s.getState()).toEqual({ ok: true });
    expect((await s.history()).map((m) => m.content)).toEqual(["hi"]);
    expect((await s.listCheckpoints()).items.map((c) => c.name)).toEqual(["atomic"]);
  });

  it("on a throw rolls back state, messages and tool effects, and rethrows the block's error", async () => {
    const { fp } = dbs.open({ tools: [writeFile] });
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "before" });
    await s.setState({ step: 1 });
    const boom = new Error("boom");
    const err = await rejectionOf(
      s.atomic(
        async () => {
          await s.append({ role: "assistant", content: "inside" });
          await s.setState({ step: 2 });
          await s.invoke("write_file", { name: "atomic.txt", text: "x" });
          expect(fs.existsSync(path.join(dir, "atomic.txt"))).toBe(true);
          throw boom;
        },
        { name: "guard" },
      ),
    );
    expect(err).toBe(boom);
    expect(await s.getState()).toEqual({ step: 1 });
    expect((await s.history()).map((m) => m.content)).toEqual(["before"]);
    expect(fs.existsSync(path.join(dir, "atomic.txt"))).toBe(false);
    expect(await s.toolTrack()).toEqual([]);
    expect((await s.listCheckpoints()).items.map((c) => c.name)).toEqual(["guard"]);
    expect((await fp.verify()).ok).toBe(true);
  });

  it("rolls back even when the session's retention expired its checkpoint during the block", async () => {
    const { fp } = dbs.open({ tools: [writeFile] });
    const s = await fp.createSession({ userId: "u" });
    await s.setRetention({ keepLast: 1 });
    await s.setState({ n: 1 });
    const step = s.withCheckpoints(async (n: number) => s.setState({ n }), { name: "step" });
    const e = await rejectionOf(
      s.atomic(async () => {
        await s.invoke("write_file", { name: "kept.txt", text: "x" });
        await step(2);
        await step(3); // keepLast: 1 has expired the block's own checkpoint by now
        throw new Error("boom");
      }),
    );
    expect(e).not.toBeInstanceOf(AtomicRollbackError);
    expect(e.message).toBe("boom");
    expect(await s.getState()).toEqual({ n: 1 });
    expect(fs.existsSync(path.join(dir, "kept.txt"))).toBe(false);
    expect(await fp.verify()).toMatchObject({ ok: true });
  });

  it("when the rollback fails too, throws an AtomicRollbackError carrying both", async () => {
    const { fp } = dbs.open({ tools: [failingUndo] });
    const s = await fp.createSession({ userId: "u" });
    const boom = new Error("boom");
    const err = await rejectionOf(
      s.atomic(async () => {
        await s.invoke("sticky", { name: "a" });
        throw boom;
      }),
    );
    expect(err).toBeInstanceOf(AtomicRollbackError);
    expect(err).toMatchObject({ code: "ATOMIC_ROLLBACK_FAILED", error: boom, cause: boom });
    expect((err as AtomicRollbackError).rollbackError).toBeInstanceOf(Error);
    expect((err as AtomicRollbackError).checkpointId).toBe((await s.listCheckpoints()).items[0]!.id);
  });

  it("refuses bad input before checkpointing", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    expect(await rejectionOf(s.atomic("no" as never))).toBeInstanceOf(ValidationError);
    expect(await rejectionOf(s.atomic(async () => 1, { name: "" }))).toBeInstanceOf(ValidationError);
    expect(await rejectionOf(s.atomic(async () => 1, { bogus: 1 } as never))).toBeInstanceOf(ValidationError);
    expect((await s.listCheckpoints()).items).toEqual([]);
  });
});

describe("atomic among the handle's calls made without awaiting", () => {
  const contents = async (s: { history(): Promise<{ content: unknown }[]> }) => (await s.history()).map((m) => m.content);

  it("a write made after atomic() lands after the block's rollback, not rolled back with it", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "start" });
    const guarded = rejectionOf(
      s.atomic(async () => {
        await s.append({ role: "user", content: "inside 1" });
        await new Promise((r) => setTimeout(r, 50));
        await s.append({ role: "user", content: "inside 2" });
        throw new Error("boom");
      }),
    );
    const after = s.append({ role: "user", content: "after" });
    await after;
    expect(((await guarded) as Error).message).toBe("boom");
    expect(await contents(s)).toEqual(["start", "after"]);
    expect((await fp.verify()).ok).toBe(true);
  });

  it("a write made after atomic() lands after the block's writes when it returns", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const guarded = s.atomic(async () => {
      await s.append({ role: "user", content: "inside 1" });
      await new Promise((r) => setTimeout(r, 50));
      await s.append({ role: "user", content: "inside 2" });
      return "done";
    });
    await s.setState({ after: true });
    await s.append({ role: "user", content: "after" });
    expect(await guarded).toBe("done");
    expect(await contents(s)).toEqual(["inside 1", "inside 2", "after"]);
  });

  it("the block's own calls (a nested atomic, a rollback, a checkpoint) do not wait for it", async () => {
    const { fp } = dbs.open({ tools: [writeFile] });
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "start" });
    const value = await s.atomic(async () => {
      const cp = await s.checkpoint({ name: "inside" });
      await Promise.all([s.append({ role: "user", content: "a" }), s.setState({ n: 1 })]);
      await rejectionOf(
        s.atomic(async () => {
          await s.invoke("write_file", { name: "nested.txt", text: "x" });
          throw new Error("nested");
        }),
      );
      await s.append({ role: "user", content: "b" });
      await s.rollback(cp.id);
      await s.append({ role: "user", content: "c" });
      return "ok";
    });
    expect(value).toBe("ok");
    expect(await contents(s)).toEqual(["start", "c"]);
    expect(fs.existsSync(path.join(dir, "nested.txt"))).toBe(false);
  });

  it("a block in a tool's run on its own session runs, its writes landing after the running call", async () => {
    const { fp } = dbs.open({
      tools: [
        defineTool<{ text: string }, { ok: boolean }>({
          name: "note",
          run: async ({ text }, ctx) => {
            const own = await fp.getSession(ctx.sessionId, { userId: "u" });
            await own.atomic(async () => {
              await own.append({ role: "assistant", content: text });
            });
            return { ok: true };
          },
        }),
      ],
    });
    const s = await fp.createSession({ userId: "u" });
    expect(await s.invoke("note", { text: "from the tool" })).toEqual({ ok: true });
    expect(await contents(s)).toEqual(["from the tool"]);
  });

  it("a failed block in a tool's run on its own session cannot roll back: AtomicRollbackError, REENTRANT_CALL", async () => {
    let failed: unknown;
    const { fp } = dbs.open({
      tools: [
        defineTool<{ text: string }, { ok: boolean }>({
          name: "note",
          run: async ({ text }, ctx) => {
            const own = await fp.getSession(ctx.sessionId, { userId: "u" });
            failed = await rejectionOf(
              own.atomic(async () => {
                await own.append({ role: "assistant", content: text });
                throw new Error("boom");
              }),
            );
            return { ok: true };
          },
        }),
      ],
    });
    const s = await fp.createSession({ userId: "u" });
    await s.invoke("note", { text: "from the tool" });
    expect(failed).toBeInstanceOf(AtomicRollbackError);
    expect((failed as AtomicRollbackError).rollbackError).toMatchObject({ code: "REENTRANT_CALL" });
    expect(await contents(s)).toEqual(["from the tool"]);
  });

  it("a tool call running when atomic() is made keeps what its run wrote: the block begins after it", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { fp } = dbs.open({
      tools: [
        defineTool<{ text: string }, { ok: boolean }>({
          name: "say",
          run: async ({ text }, ctx) => {
            await gate;
            await (await fp.getSession(ctx.sessionId, { userId: "u" })).append({ role: "assistant", content: text });
            return { ok: true };
          },
        }),
      ],
    });
    const s = await fp.createSession({ userId: "u" });
    const t = await fp.getSession(s.id, { userId: "u" });
    await s.append({ role: "user", content: "start" });
    // Two calls (this handle's and another's of the same Forkpoint) run, waiting at the gate, when the block is made.
    const calls = Promise.all([s.invoke("say", { text: "said by the tool" }), t.invoke("say", { text: "said again" })]);
    await new Promise((r) => setTimeout(r, 50));
    const guarded = rejectionOf(
      s.atomic(async () => {
        await s.append({ role: "user", content: "inside" });
        await new Promise((r) => setTimeout(r, 50));
        throw new Error("boom");
      }),
    );
    release();
    expect(((await guarded) as Error).message).toBe("boom");
    await calls;
    // The two calls' appends land in either order once released.
    expect((await contents(s)).sort()).toEqual(["said again", "said by the tool", "start"]);
  });

  it("a call on another session does not wait for the block", async () => {
    const { fp } = dbs.open();
    const [s, other] = [await fp.createSession({ userId: "u" }), await fp.createSession({ userId: "u" })];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const guarded = s.atomic(async () => {
      await s.append({ role: "user", content: "inside" });
      await gate;
    });
    await other.append({ role: "user", content: "elsewhere" });
    release();
    await guarded;
    expect(await contents(other)).toEqual(["elsewhere"]);
    expect(await contents(s)).toEqual(["inside"]);
  });
});

describe("withCheckpoints", () => {
  it("takes a checkpoint after every nth completed call, counting per wrapper", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    let n = 0;
    const step = s.withCheckpoints(
      async (by: number) => {
        await s.setState({ n: (n += by) });
        return n;
      },
      { every: 3, name: "tick" },
    );
    const other = s.withCheckpoints(async () => "x", { every: 2, name: "other" });
    const results = [];
    for (let i = 0; i < 7; i++) results.push(await step(1));
    expect(results).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(await other()).toBe("x");
    const cps = (await s.listCheckpoints()).items.reverse();
    expect(cps.map((c) => [c.name, c.metadata])).toEqual([
      ["tick", { calls: 3 }],
      ["tick", { calls: 6 }],
    ]);
    expect((await s.restore(cps[1]!.id)).state).toEqual({ n: 6 });
    expect(await other()).toBe("x");
    expect((await s.listCheckpoints()).items[0]).toMatchObject({ name: "other", metadata: { calls: 2 } });
  });

  it("does not count a call that throws; validates its options", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const step = s.withCheckpoints(async (fail: boolean) => {
      if (fail) throw new Error("no");
      return "ok";
    });
    expect(await rejectionOf(step(true))).toMatchObject({ message: "no" });
    expect((await s.listCheckpoints()).items).toEqual([]);
    expect(await step(false)).toBe("ok");
    expect((await s.listCheckpoints()).items).toHaveLength(1);
    expect(() => s.withCheckpoints(async () => 1, { every: 0 })).toThrow(ValidationError);
    expect(() => s.withCheckpoints("no" as never)).toThrow(ValidationError);
  });
});
