// Checkpoints (manual and automatic) and restore: a read-only, checksum-verified materialization.
import { describe, expect, it } from "vitest";
import { IntegrityError } from "../../src/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { dumpOf, sqlOn } from "../fixtures/backend.js";

const dbs = tempDatabases();

describe("a manual checkpoint", () => {
  it("records the current branch and head position, its name and metadata, owner, checksum and creation time", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append([
      { role: "user", content: "a" },
      { role: "assistant", content: "b" },
    ]);
    const cp = await s.checkpoint({ name: "before booking", metadata: { reason: "test", n: 1 } });
    expect(cp).toEqual({
      id: expect.any(String),
      sessionId: s.id,
      branchId: (await s.info()).currentBranchId,
      position: 2,
      name: "before booking",
      auto: false,
      metadata: { reason: "test", n: 1 },
      userId: "alice",
      checksum: expect.stringMatching(/^[0-9a-f]{64}$/),
      createdAt: expect.any(Date),
      expiresAt: null,
    });
  });

  it("without options has no name and no metadata", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const cp = await s.checkpoint();
    expect(cp.name).toBeNull();
    expect(cp.metadata).toBeNull();
  });

  it("of an empty session is at position 0 and restores to no history and the state {}", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const cp = await s.checkpoint({ name: "start" });
    expect(cp.position).toBe(0);
    const restored = await s.restore(cp.id);
    expect(restored.history).toEqual([]);
    expect(restored.state).toEqual({});
  });

  it("adds one checkpoint row and nothing else", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append([
      { role: "user", content: "a" },
      { role: "user", content: "b" },
    ]);
    const before = await dumpOf(path);
    await s.checkpoint({ name: "x" });
    const after = await dumpOf(path);
    expect(after.checkpoints!.length).toBe(before.checkpoints!.length + 1);
    expect(after.entries).toEqual(before.entries);
    expect(after.branches).toEqual(before.branches);
    expect(after.state_snapshots).toEqual(before.state_snapshots);
  });
});

describe("automatic checkpoints", () => {
  it("are never created without a policy", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    for (let i = 0; i < 5; i++) await s.append(Array.from({ length: 10 }, (_, j) => ({ role: "user", content: `${i}-${j}` })));
    await s.setState({ a: 1 });
    expect(await fp.listCheckpoints({ userId: "alice" })).toEqual({ items: [], nextCursor: null });
  });

  it("with { everyMessages: 3 } are taken after every third message, flagged auto and unnamed", async () => {
    const { fp } = dbs.open({ autoCheckpoint: { everyMessages: 3 } });
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "1" });
    await s.append([
      { role: "assistant", content: "2" },
      { role: "user", content: "3" },
      { role: "assistant", content: "4" },
    ]);
    await s.append([
      { role: "user", content: "5" },
      { role: "assistant", content: "6" },
      { role: "user", content: "7" },
    ]);
    const { items } = await fp.listCheckpoints({ userId: "alice" });
    expect(items.map((c) => c.position)).toEqual([6, 3]);
    expect(items.every((c) => c.auto && c.name === null && c.sessionId === s.id)).toBe(true);
    const restored = await s.restore(items[1]!.id);
    expect(restored.history.map((m) => m.content)).toEqual(["1", "2", "3"]);
  });

  it("count messages, not state changes", async () => {
    const { fp } = dbs.open({ autoCheckpoint: { everyMessages: 2 } });
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "1" });
    await s.setState({ x: 1 });
    await s.setState({ x: 2 });
    expect((await fp.listCheckpoints({ userId: "alice" })).items).toEqual([]);
    await s.append({ role: "user", content: "2" });
    const { items } = await fp.listCheckpoints({ userId: "alice" });
    expect(items.map((c) => c.position)).toEqual([4]);
    expect((await s.restore(items[0]!.id)).state).toEqual({ x: 2 });
  });

  it("do not appear in the listing of manual ones, and the auto filter separates them", async () => {
    const { fp } = dbs.open({ autoCheckpoint: { everyMessages: 1 } });
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "1" });
    const manual = await s.checkpoint({ name: "mine" });
    expect((await fp.listCheckpoints({ userId: "alice", auto: false })).items.map((c) => c.id)).toEqual([manual.id]);
    expect((await fp.listCheckpoints({ userId: "alice", auto: true })).items).toHaveLength(1);
  });
});

describe("restore", () => {
  it("returns { checkpoint, state, history, toolTrack } as they were at the checkpoint", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const msgs = await s.append([
      { role: "user", content: "a" },
      { role: "assistant", content: { parts: ["b"] } },
    ]);
    await s.setState({ booked: false });
    const cp = await s.checkpoint({ name: "cp" });
    await s.append({ role: "user", content: "later" });
    await s.setState({ booked: true });

    const restored = await s.restore(cp.id);
    expect(restored).toEqual({ checkpoint: cp, state: { booked: false }, history: msgs, toolTrack: [] });
    expect(Object.keys(restored).sort()).toEqual(["checkpoint", "history", "state", "toolTrack"]);
  });

  it("is read-only: the database is byte-for-byte the same afterwards and the current branch is unchanged", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "a" });
    const cp = await s.checkpoint();
    await s.append({ role: "user", content: "b" });
    const before = await dumpOf(path);
    await s.restore(cp.id);
    expect(await dumpOf(path)).toEqual(before);
    expect((await s.history()).map((m) => m.content)).toEqual(["a", "b"]);
  });

  it("restores a checkpoint taken on another branch than the current one", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "a" });
    const start = await s.checkpoint();
    await s.append({ role: "user", content: "root-only" });
    const onRoot = await s.checkpoint();
    await s.rollback(start.id);
    await s.append({ role: "user", content: "branch-only" });
    expect((await s.restore(onRoot.id)).history.map((m) => m.content)).toEqual(["a", "root-only"]);
  });

  it("throws IntegrityError when a message inside the checkpoint's history was altered in the file", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const [, m2] = await s.append([
      { role: "user", content: "a" },
      { role: "assistant", content: "b" },
    ]);
    const cp = await s.checkpoint();
    await sqlOn(path, `UPDATE entries SET content = $1 WHERE id = $2`, [JSON.stringify("B"), m2!.id]);
    const e = await rejectionOf(s.restore(cp.id));
    expect(e).toBeInstanceOf(IntegrityError);
    expect(e.code).toBe("INTEGRITY_ERROR");
  });

  it("throws IntegrityError when a message's role was altered in the file", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const [m1] = await s.append([
      { role: "user", content: "a" },
      { role: "assistant", content: "b" },
    ]);
    const cp = await s.checkpoint();
    await sqlOn(path, `UPDATE entries SET role = 'system' WHERE id = $1`, [m1!.id]);
    expect(await rejectionOf(s.restore(cp.id))).toBeInstanceOf(IntegrityError);
  });

  it("throws IntegrityError when the stored checksum has a flipped character", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "a" });
    const cp = await s.checkpoint();
    const flipped = (cp.checksum[0] === "0" ? "1" : "0") + cp.checksum.slice(1);
    await sqlOn(path, `UPDATE checkpoints SET checksum = $1 WHERE id = $2`, [flipped, cp.id]);
    const e = await rejectionOf(s.restore(cp.id));
    expect(e).toBeInstanceOf(IntegrityError);
    expect(e.code).toBe("INTEGRITY_ERROR");
  });

  it("throws IntegrityError when the checkpoint's own name or metadata was altered in the file", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "a" });
    const named = await s.checkpoint({ name: "real" });
    const withMeta = await s.checkpoint({ metadata: { k: 1 } });
    await sqlOn(path, `UPDATE checkpoints SET name = 'forged' WHERE id = $1`, [named.id]);
    await sqlOn(path, `UPDATE checkpoints SET metadata = '{"k":2}' WHERE id = $1`, [withMeta.id]);
    expect(await rejectionOf(s.restore(named.id))).toBeInstanceOf(IntegrityError);
    expect(await rejectionOf(s.restore(withMeta.id))).toBeInstanceOf(IntegrityError);
  });

  it("throws IntegrityError when the state snapshot of the checkpoint was altered in the file", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.setState({ balance: 10 });
    const cp = await s.checkpoint();
    await sqlOn(path, `UPDATE state_snapshots SET body = '{"balance":1000000}'`);
    expect(await rejectionOf(s.restore(cp.id))).toBeInstanceOf(IntegrityError);
  });

  it("throws IntegrityError when an entry of the parent lineage was altered, for a checkpoint on a child branch", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const [m1] = await s.append([
      { role: "user", content: "a" },
      { role: "user", content: "b" },
    ]);
    const fork = await s.checkpoint();
    await s.rollback(fork.id);
    await s.append({ role: "user", content: "c" });
    const onChild = await s.checkpoint();
    await sqlOn(path, `UPDATE entries SET content = '"A"' WHERE id = $1`, [m1!.id]);
    expect(await rejectionOf(s.restore(onChild.id))).toBeInstanceOf(IntegrityError);
  });

  it("still restores a checkpoint taken before the altered message (the chain up to it is intact)", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "a" });
    const early = await s.checkpoint();
    const [late] = await s.append({ role: "user", content: "b" });
    await sqlOn(path, `UPDATE entries SET content = '"tampered"' WHERE id = $1`, [late!.id]);
    expect((await s.restore(early.id)).history.map((m) => m.content)).toEqual(["a"]);
  });
});
