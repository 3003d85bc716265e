// A guarded block against the rest of the world: its checkpoint is held against retention and prune (any handle's,
// any server's) until it ends, and its rollback waits, within `waitMs`, for a call or move running on another handle.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { AtomicRollbackError, defineTool, type Forkpoint } from "../../src/index.js";
import { engineOf } from "../../src/sessions/forkpoint.js";
import { makeTempDir, rejectionOf, sleep, tempDatabases, writeFileTool } from "../helpers.js";
import { sqlOn } from "../fixtures/backend.js";

const dbs = tempDatabases();
const dir = makeTempDir();
const writeFile = writeFileTool(dir);
const exists = (name: string) => fs.existsSync(path.join(dir, name));

/**
 * A tool that writes a file (its undo deletes it); its runs (or, with `"undo"`, its undos) wait for `release()`, and
 * `running` resolves once one has started.
 */
function gatedTool(gated: "run" | "undo" = "run") {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const tool = defineTool<{ name: string }, { path: string }>({
    name: "gated_write",
    run: async ({ name }) => {
      if (gated === "run") {
        started();
        await gate;
      }
      fs.writeFileSync(path.join(dir, name), "gated");
      return { path: name };
    },
    undo: async ({ result }) => {
      if (gated === "undo") {
        started();
        await gate;
      }
      fs.rmSync(path.join(dir, result.path), { force: true });
    },
  });
  return { tool, release, running };
}

/** Two handles on one database: this process's `fp`, and `other` standing for another server. */
function twoServers(tools: Parameters<typeof dbs.open>[0] = {}): { fp: Forkpoint; other: Forkpoint; file: string } {
  const { fp, path: file } = dbs.open(tools);
  const other = dbs.open({ ...tools, path: file }).fp;
  return { fp, other, file };
}

const holdsOf = async (file: string) => (await sqlOn<{ n: number }>(file, "SELECT count(*) AS n FROM checkpoint_holds"))[0]!.n;

describe("atomic: the block's checkpoint is held until the block ends", () => {
  it("no prune during the block (this handle's) takes it, though retention would drop it", async () => {
    const { fp } = dbs.open({ tools: [writeFile] });
    const s = await fp.createSession({ userId: "u" });
    await s.setRetention({ keepLast: 1 });
    await s.setState({ n: 1 });
    const step = s.withCheckpoints(async (n: number) => s.setState({ n }), { name: "step" });
    const e = await rejectionOf(
      s.atomic(async () => {
        await s.invoke("write_file", { name: "held.txt", text: "x" });
        await step(2);
        await step(3);
        expect((await fp.prune()).checkpoints).toBe(1); // "step" 2, pushed out by 3; the block's own is held
        throw new Error("boom");
      }),
    );
    expect(e).not.toBeInstanceOf(AtomicRollbackError);
    expect(e.message).toBe("boom");
    expect(await s.getState()).toEqual({ n: 1 });
    expect(exists("held.txt")).toBe(false);
    // Never expired: it marks where the block began.
    expect((await s.listCheckpoints()).items.map((c) => c.name)).toContain("atomic");
    expect(await fp.verify()).toMatchObject({ ok: true });
  });

  it("another server's prune keeps it, under a retention policy, when only automatic checkpoints follow it", async () => {
    const { fp, other } = twoServers({ tools: [writeFile], autoCheckpoint: { everyMessages: 1 } });
    const s = await fp.createSession({ userId: "u" });
    await s.setRetention({ keepLast: 1 });
    await s.append({ role: "user", content: "before" });
    const e = await rejectionOf(
      s.atomic(async () => {
        await s.append({ role: "user", content: "inside" }); // an automatic checkpoint: keepLast 1 would drop the block's
        await s.invoke("write_file", { name: "auto.txt", text: "x" });
        await other.prune();
        throw new Error("boom");
      }),
    );
    expect(e).not.toBeInstanceOf(AtomicRollbackError);
    expect((await s.history()).map((m) => m.content)).toEqual(["before"]);
    expect(exists("auto.txt")).toBe(false);
  });

  it("the hold ends with the block: then retention and prune treat the checkpoint as any other", async () => {
    const { fp, path: file } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.setRetention({ keepLast: 1 });
    const during = await s.atomic(async () => holdsOf(file));
    expect(during).toBe(1);
    expect(await holdsOf(file)).toBe(0);
    await s.checkpoint({ name: "later" });
    await fp.prune();
    expect((await s.listCheckpoints()).items.map((c) => c.name)).toEqual(["later"]);
    // A block that throws releases it too.
    await rejectionOf(s.atomic(() => Promise.reject(new Error("boom"))));
    expect(await holdsOf(file)).toBe(0);
  });

  it("another server cannot delete it while the block runs: the rollback still finds it", async () => {
    const { fp, other } = twoServers({ tools: [writeFile] });
    const s = await fp.createSession({ userId: "u" });
    await s.setState({ n: 0 });
    const same = await other.getSession(s.id, { userId: "u" });
    let refusal: unknown;
    const e = await rejectionOf(
      s.atomic(async () => {
        await s.invoke("write_file", { name: "deleted.txt", text: "x" });
        await s.setState({ n: 1 });
        const held = (await same.listCheckpoints()).items.find((c) => c.name === "atomic")!;
        refusal = await rejectionOf(same.deleteCheckpoint(held.id));
        throw new Error("boom");
      }),
    );
    expect(refusal).toMatchObject({ code: "CHECKPOINT_IN_USE" });
    expect(e).not.toBeInstanceOf(AtomicRollbackError);
    expect(await s.getState()).toEqual({ n: 0 });
    expect(exists("deleted.txt")).toBe(false);
    // Once the block has ended, it is a checkpoint like any other.
    const cp = (await s.listCheckpoints()).items.find((c) => c.name === "atomic")!;
    await s.switchBranch((await s.branches()).find((b) => b.reason === "root")!.id);
    await rejectionOf(s.deleteCheckpoint(cp.id)); // the rollback's branch forks from it
    const free = await s.atomic(() => s.checkpoint({ name: "inside" }));
    await same.deleteCheckpoint(free.id);
  });

  it("a hold its holder stopped renewing lapses: prune then drops the checkpoint and the hold", async () => {
    const { fp, path: file } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const cp = await s.checkpoint({ name: "held" });
    await s.expire(cp.id);
    const store = engineOf(fp).ctx.store;
    await store.write({ sessionId: s.id }, (tx) => tx.holdCheckpoint(cp.id, s.id, 300));
    expect((await fp.prune()).checkpoints).toBe(0);
    let pruned = 0;
    while (pruned === 0) {
      await sleep(50);
      pruned = (await fp.prune({ vacuum: false })).checkpoints;
    }
    expect(await holdsOf(file)).toBe(0);
    expect(await fp.verify()).toMatchObject({ ok: true });
  });
});

describe("atomic: the rollback waits for another server's call or move", () => {
  it("a tool call running on another handle: the rollback waits for it, then undoes it with the block's", async () => {
    const g = gatedTool();
    const { fp, other } = twoServers({ tools: [writeFile, g.tool] });
    const s = await fp.createSession({ userId: "u" });
    const same = await other.getSession(s.id, { userId: "u" });
    let call: Promise<unknown> | undefined;
    const e = await rejectionOf(
      s.atomic(async () => {
        await s.invoke("write_file", { name: "mine.txt", text: "x" });
        call = same.invoke("gated_write", { name: "theirs.txt" });
        await g.running;
        setTimeout(g.release, 50);
        throw new Error("boom");
      }),
    );
    expect(e).not.toBeInstanceOf(AtomicRollbackError);
    expect(e.message).toBe("boom");
    expect(await call).toEqual({ path: "theirs.txt" });
    expect([exists("mine.txt"), exists("theirs.txt")]).toEqual([false, false]);
    expect(await s.toolTrack()).toEqual([]);
  });

  it("a move running on another handle: the rollback waits for it to end, then goes back", async () => {
    const g = gatedTool("undo");
    const { fp, other } = twoServers({ tools: [writeFile, g.tool] });
    const s = await fp.createSession({ userId: "u" });
    const start = await s.checkpoint({ name: "start" });
    await s.invoke("gated_write", { name: "early.txt" });
    const same = await other.getSession(s.id, { userId: "u" });
    let moving: Promise<unknown> | undefined;
    const e = await rejectionOf(
      s.atomic(async () => {
        await s.invoke("write_file", { name: "mine.txt", text: "x" });
        moving = same.rollback(start.id); // its undo of early.txt waits
        await g.running;
        setTimeout(g.release, 50);
        throw new Error("boom");
      }),
    );
    expect(e).not.toBeInstanceOf(AtomicRollbackError);
    expect(e.message).toBe("boom");
    await moving;
    // Back where the block began: early.txt (undone by the other move) is there again, mine.txt is not.
    expect([exists("early.txt"), exists("mine.txt")]).toEqual([true, false]);
    expect((await s.toolTrack()).map((t) => t.tool)).toEqual(["gated_write"]);
  });

  it("past waitMs it gives up: AtomicRollbackError carrying the refusal, as before", async () => {
    const g = gatedTool();
    const { fp, other } = twoServers({ tools: [writeFile, g.tool] });
    const s = await fp.createSession({ userId: "u" });
    const same = await other.getSession(s.id, { userId: "u" });
    let call: Promise<unknown> | undefined;
    const e = await rejectionOf(
      s.atomic(
        async () => {
          call = same.invoke("gated_write", { name: "slow.txt" });
          await g.running;
          throw new Error("boom");
        },
        { waitMs: 30 },
      ),
    );
    expect(e).toBeInstanceOf(AtomicRollbackError);
    expect((e as AtomicRollbackError).rollbackError).toMatchObject({ code: "CALL_IN_PROGRESS" });
    g.release();
    await call;
    // Nothing moved: a later rollback to the block's checkpoint still works.
    const cp = (e as AtomicRollbackError).checkpointId;
    expect((await s.rollback(cp)).undone.map((t) => t.tool)).toEqual(["gated_write"]);
  });
});
