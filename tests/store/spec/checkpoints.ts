// Spec: checkpoints: seq in insertion order, per-user listings with filters and keyset pages, expiry, holds, deletion.
import { expect, it } from "vitest";
import type { Store } from "../../../src/store/port/index.js";
import { at, checkpoint, rootBranch, seed } from "./fixture.js";

export function checkpointsSpec(store: () => Store): void {
  it("reads a checkpoint back exactly, its seq growing in insertion order whatever its time", async () => {
    await seed(store(), "k", "alice", 6);
    await store().write({ sessionId: "k" }, function* (tx) {
      yield* tx.insertCheckpoint(checkpoint("k1", "k", 2, { name: "first", metadata: '{"source":"input"}', createdAt: at(45) }), at(41));
      yield* tx.insertCheckpoint(checkpoint("k2", "k", 4, { auto: true, createdAt: at(42) }), at(42));
      yield* tx.insertCheckpoint(checkpoint("k3", "k", 5, { name: "first", expiresAt: at(50), createdAt: at(43) }), at(43));
      yield* tx.insertCheckpoint(checkpoint("k4", "k", 6, { userId: "mallory", createdAt: at(44) }), at(44));
    });
    const [k1, k2] = await store().read(function* (tx) {
      return [yield* tx.getCheckpoint("k1"), yield* tx.getCheckpoint("k2")];
    });
    expect(k1).toMatchObject({ ...checkpoint("k1", "k", 2, { name: "first", metadata: '{"source":"input"}', createdAt: at(45) }) });
    expect(k2!.auto).toBe(true);
    expect(k2!.seq).toBeGreaterThan(k1!.seq);
    expect(await store().query((tx) => tx.getCheckpoint("nope"))).toBeUndefined();
  });

  it("reads a checkpoint's metadata index rows by its seq: its top-level scalars, for its user", async () => {
    await store().write({ sessionId: "k" }, function* (tx) {
      const metadata = '{"agent":"planner","step":2,"ok":true,"nested":{"a":1},"none":null}';
      yield* tx.insertCheckpoint(checkpoint("km", "k", 1, { metadata, createdAt: at(40) }), at(40));
    });
    const rows = await store().read(function* (tx) {
      const seqOf = function* (id: string) {
        return (yield* tx.getCheckpoint(id))!.seq;
      };
      return {
        km: yield* tx.checkpointMetadataRows(yield* seqOf("km")),
        k2: yield* tx.checkpointMetadataRows(yield* seqOf("k2")),
        none: yield* tx.checkpointMetadataRows(0),
      };
    });
    const order = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
    expect(rows.km.sort(order)).toEqual([
      { userId: "alice", key: "agent", value: '"planner"' },
      { userId: "alice", key: "none", value: "null" },
      { userId: "alice", key: "ok", value: "true" },
      { userId: "alice", key: "step", value: "2" },
    ]);
    expect(rows.k2).toEqual([]);
    expect(rows.none).toEqual([]);
    // Later specs count this session's checkpoints: it is gone again.
    await store().write({ sessionId: "k" }, (tx) => tx.deleteCheckpoint("km"));
  });

  it("lists a user's live checkpoints newest first, filtered, a page at a time", async () => {
    const list = (filter: object) =>
      store().query((tx) => tx.listCheckpoints({ userId: "alice", sessionId: "k", now: at(49), limit: 10, ...filter }));
    const ids = async (filter: object) => (await list(filter)).map((c) => c.id);
    expect(await ids({})).toEqual(["k3", "k2", "k1"]);
    expect(await ids({ name: "first" })).toEqual(["k3", "k1"]);
    expect(await ids({ auto: true })).toEqual(["k2"]);
    expect(await ids({ auto: false })).toEqual(["k3", "k1"]);
    expect(await ids({ now: at(60) })).toEqual(["k2", "k1"]);
    expect(await ids({ since: at(43) })).toEqual(["k3", "k1"]);
    expect(await ids({ until: at(43) })).toEqual(["k3", "k2"]);
    expect(await ids({ metadata: [["source", '"input"']] })).toEqual(["k1"]);
    const first = await list({ limit: 2 });
    expect(await ids({ beforeSeq: first[1]!.seq })).toEqual(["k1"]);
    expect(await store().query((tx) => tx.listCheckpoints({ userId: "mallory", sessionId: "k", now: at(49), limit: 10 }))).toHaveLength(1);
    expect(await store().query((tx) => tx.countCheckpoints("alice", "k", at(49)))).toBe(3);
    expect(await store().query((tx) => tx.countCheckpoints("alice", "k", at(60)))).toBe(2);
    expect((await store().read((tx) => tx.sessionCheckpoints("alice", "k"))).map((c) => c.id)).toEqual(["k1", "k2", "k3"]);
    // The newest by insertion, whatever its time.
    expect(await store().read((tx) => tx.lastCheckpointAt("alice", "k"))).toBe(at(43));
    expect(await store().read((tx) => tx.lastCheckpointAt("alice", "none"))).toBe(0);
    const perBranch = await store().read((tx) => tx.newestPerBranch("alice", ["k-b1", "nope"], at(49), 2));
    expect(perBranch.map((c) => c.id)).toEqual(["k3", "k2"]);
  });

  it("finds checkpoints whose user owns no such session (orphans)", async () => {
    expect(await store().read((tx) => tx.orphanCheckpointIds("k"))).toEqual(["k4"]);
    expect(await store().read((tx) => tx.orphanCheckpointIds())).toContain("k4");
  });

  it("reads a checkpoint with its branch and anchor entries in one lookup", async () => {
    const anchor = await store().read((tx) => tx.checkpointAnchor("k2"));
    expect(anchor?.checkpoint.id).toBe("k2");
    expect(anchor?.branch?.id).toBe("k-b1");
    expect(anchor?.anchor?.id).toBe("k-b1-e4");
    expect(await store().read((tx) => tx.checkpointAnchor("nope"))).toBeUndefined();
  });

  it("weighs checkpoints for retention (once the session has a policy): by offset, by name, aged ones oldest first", async () => {
    // Retention weighs only sessions with a policy: what a store answers for others is left open (SQLite leaves them out).
    await store().write({ sessionId: "k" }, (tx) => tx.setRetention("k", '{"keepLast":1}', 0));
    const got = await store().read(function* (tx) {
      return {
        newest: yield* tx.liveCheckpointAt("alice", "k", at(49), 0),
        second: yield* tx.liveCheckpointAt("alice", "k", at(49), 1),
        beyond: yield* tx.liveCheckpointAt("alice", "k", at(49), 9),
        named: yield* tx.newestNamed("k", "first", at(49), Number.MAX_SAFE_INTEGER),
        unnamed: yield* tx.newestNamed("k", null, at(49), Number.MAX_SAFE_INTEGER),
        manual: (yield* tx.branchCheckpoints("k-b1", false, at(49), 10)).map((c) => c.id),
        manualNewest: (yield* tx.branchCheckpoints("k-b1", false, at(49), 1)).map((c) => c.id),
        autos: yield* tx.branchCheckpoints("k-b1", true, at(49), 10),
        laterManual: (yield* tx.branchCheckpoints("k-b1", false, at(60), 10)).map((c) => c.id),
        otherBranch: yield* tx.branchCheckpoints("nope", false, at(49), 10),
        branchNewest: yield* tx.newestOnBranch("k-b1", at(49), Number.MAX_SAFE_INTEGER),
        firstSeq: yield* tx.firstCheckpointSeq("alice", "k"),
        aged: (yield* tx.agedCheckpoints("k", 0, at(44), at(49), 10)).map((c) => c.id),
        stats: yield* tx.checkpointStats("alice", "k", at(49)),
        filesAt: yield* tx.lastFilesPosition("k-b1", 0, 6),
      };
    });
    expect(got.newest?.id).toBe("k3");
    expect(got.second?.id).toBe("k2");
    expect(got.beyond).toBeUndefined();
    expect(got.named?.id).toBe("k3");
    // Not scoped to a user: the session's checkpoints, mallory's orphan k4 among them.
    expect(got.unnamed?.id).toBe("k4");
    // A branch's own, one kind at a time, newest first (not scoped to a user either).
    expect(got.manual).toEqual(["k4", "k3", "k1"]);
    expect(got.manualNewest).toEqual(["k4"]);
    expect(got.autos).toEqual([{ seq: expect.any(Number), id: "k2", branchId: "k-b1", name: null, auto: true, createdAt: at(42) }]);
    expect(got.laterManual).toEqual(["k4", "k1"]);
    expect(got.otherBranch).toEqual([]);
    expect(got.branchNewest).toMatchObject({ id: "k4", branchId: "k-b1", auto: false });
    const below = await store().read((tx) => tx.newestOnBranch("k-b1", at(49), got.branchNewest!.seq));
    expect(below?.id).toBe("k3");
    expect(await store().read((tx) => tx.newestOnBranch("k-b1", at(60), got.branchNewest!.seq))).toMatchObject({ id: "k2" });
    expect(await store().read((tx) => tx.newestOnBranch("nope", at(49), Number.MAX_SAFE_INTEGER))).toBeUndefined();
    expect(got.firstSeq).toBeTypeOf("number");
    expect(got.aged).toEqual(["k2", "k3", "k4"]);
    expect(got.stats.find((s) => s.name === "first")).toMatchObject({ count: 2 });
    expect(got.filesAt).toBeUndefined();
  });

  it("keeps an expired checkpoint a branch forks from or a hold keeps; deletes the others", async () => {
    await store().write({ sessionId: "k" }, function* (tx) {
      yield* tx.expireCheckpoints(
        [
          { id: "k1", checksum: "x1" },
          { id: "k2", checksum: "x2" },
        ],
        at(46),
      );
      yield* tx.insertBranch(
        rootBranch("k", { id: "k-b2", parentId: "k-b1", forkCheckpointId: "k1", forkPosition: 2, forkEntryId: "k-b1-e2" }),
      );
      yield* tx.holdCheckpoint("k2", "k", 60_000);
    });
    expect(await store().read((tx) => tx.getCheckpoint("k2"))).toMatchObject({ expiresAt: at(46), checksum: "x2" });
    expect(await store().read((tx) => tx.checkpointInUse("k", "k1"))).toBe(true);
    expect(await store().read((tx) => tx.checkpointInUse("k", "k2"))).toBe(true);
    expect(await store().read((tx) => tx.checkpointInUse("k", "k3"))).toBe(false);
    const deleted = await store().write({ sessionId: "k" }, (tx) => tx.deleteExpiredCheckpoints(at(100), "k"));
    expect(deleted.map((c) => c.id)).toEqual(["k3"]);
    await store().write({ sessionId: "k" }, (tx) => tx.releaseCheckpoint("k2"));
    expect(await store().read((tx) => tx.checkpointInUse("k", "k2"))).toBe(false);
    expect((await store().write({ global: true }, (tx) => tx.deleteExpiredCheckpoints(at(100)))).map((c) => c.id)).toEqual(["k2"]);
    await store().write({ sessionId: "k" }, (tx) => tx.deleteCheckpoint("k4"));
    expect((await store().read((tx) => tx.sessionCheckpoints("alice", "k"))).map((c) => c.id)).toEqual(["k1"]);
  });
}
