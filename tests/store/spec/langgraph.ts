// Spec: ForkpointSaver's tables: threads per user, LangGraph checkpoints over forkpoint checkpoints, channel values,
// pending writes, listings by user and metadata, and deletion.
import { expect, it } from "vitest";
import type { LgCheckpointRow, LgWriteRow, Store } from "../../../src/store/port/index.js";
import { at, checkpoint, seed } from "./fixture.js";

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

const lgCheckpoint = (
  checkpointId: string,
  parentCheckpointId: string | null,
  fpCheckpointId: string,
  metadata: object,
): LgCheckpointRow => ({
  sessionId: "lg",
  checkpointId,
  parentCheckpointId,
  fpCheckpointId,
  type: "json",
  checkpoint: json({ id: checkpointId }),
  metadataType: "json",
  metadata: json(metadata),
  messagesVersion: null,
});

const write = (taskId: string, idx: number, value: string): LgWriteRow => ({
  sessionId: "lg",
  checkpointId: "1ef0-b",
  taskId,
  idx,
  channel: "messages",
  type: "json",
  value: json(value),
  taskPath: "",
});

export function langgraphSpec(store: () => Store): void {
  it("maps a user's thread to its session, and only for that user", async () => {
    await seed(store(), "lg", "alice", 4);
    await seed(store(), "lg-bob", "bob");
    await store().write({ sessionIds: ["lg", "lg-bob"] }, function* (tx) {
      yield* tx.insertCheckpoint(checkpoint("lg-c1", "lg", 2, { metadata: '{"langgraph":{"source":"input"}}' }), at(41));
      yield* tx.insertCheckpoint(checkpoint("lg-c2", "lg", 4, { metadata: '{"langgraph":{"source":"loop"}}' }), at(42));
      yield* tx.langgraph.insertThread({ userId: "alice", threadId: "t1", checkpointNs: "", sessionId: "lg", startCheckpointId: "lg-c1" });
      yield* tx.langgraph.insertThread({
        userId: "bob",
        threadId: "t1",
        checkpointNs: "",
        sessionId: "lg-bob",
        startCheckpointId: "lg-c1",
      });
    });
    const got = await store().read(function* (tx) {
      const lg = tx.langgraph;
      return {
        thread: yield* lg.getThread("alice", "t1", ""),
        otherNs: yield* lg.getThread("alice", "t1", "inner"),
        sessions: yield* lg.threadSessions("alice", "t1"),
        bobs: yield* lg.threadSessions("bob", "t1"),
        is: [yield* lg.isThreadSession("lg"), yield* lg.isThreadSession("e")],
        of: (yield* lg.threadOfSession("lg-bob"))?.userId,
      };
    });
    expect(got).toEqual({
      thread: { userId: "alice", threadId: "t1", checkpointNs: "", sessionId: "lg", startCheckpointId: "lg-c1" },
      otherNs: undefined,
      sessions: ["lg"],
      bobs: ["lg-bob"],
      is: [true, false],
      of: "bob",
    });
  });

  it("stores LangGraph checkpoints over forkpoint ones and reads them by id, newest id, and place in the tree", async () => {
    await store().write({ sessionId: "lg" }, function* (tx) {
      yield* tx.langgraph.insertCheckpoint(lgCheckpoint("1ef0-a", null, "lg-c1", { source: "input", step: -1 }));
      yield* tx.langgraph.insertCheckpoint({
        ...lgCheckpoint("1ef0-b", "1ef0-a", "lg-c2", { source: "loop", step: 0 }),
        messagesVersion: '"2"',
      });
    });
    const got = await store().read(function* (tx) {
      const lg = tx.langgraph;
      return {
        latest: yield* lg.getCheckpoint("lg"),
        byId: yield* lg.getCheckpoint("lg", "1ef0-a"),
        missing: yield* lg.getCheckpoint("lg", "nope"),
        point: yield* lg.pointOf("lg", "1ef0-a"),
        seqC1: (yield* tx.getCheckpoint("lg-c1"))!.seq,
        latestPoint: (yield* lg.latestPoint("lg"))?.checkpointId,
        latestOn: [(yield* lg.latestPointOn("lg", "lg-b1"))?.checkpointId, yield* lg.latestPointOn("lg", "other")],
        points: (yield* lg.pointsOf("lg")).map((p) => p.checkpointId).sort(),
        inFp: (yield* lg.checkpointInFp("lg-c2"))?.checkpointId,
        uses: [yield* lg.usesFpCheckpoint("lg-c1"), yield* lg.usesFpCheckpoint("nope")],
        hasChild: [yield* lg.hasChild("lg", "1ef0-a"), yield* lg.hasChild("lg", "1ef0-b")],
        landed: [yield* lg.landedOnBranch("lg", "lg-b1", 4), yield* lg.landedOnBranch("lg", "lg-b1", 5)],
        since: [yield* lg.landedSince("lg", "lg-b1", 0), yield* lg.landedSince("lg", "lg-b1", (yield* tx.getCheckpoint("lg-c2"))!.seq)],
        first: [
          yield* lg.firstLandedSince("lg", "lg-b1", 0, 0, 9),
          yield* lg.firstLandedSince("lg", "lg-b1", (yield* tx.getCheckpoint("lg-c1"))!.seq, 0, 9),
          yield* lg.firstLandedSince("lg", "lg-b1", 0, 3, 9),
          yield* lg.firstLandedSince("lg", "lg-b1", 0, 3, 3),
          yield* lg.firstLandedSince("lg", "lg-b1", (yield* tx.getCheckpoint("lg-c2"))!.seq, 0, 9),
          yield* lg.firstLandedSince("lg", "other", 0, 0, 9),
        ],
      };
    });
    expect(got.latest).toEqual({ ...lgCheckpoint("1ef0-b", "1ef0-a", "lg-c2", { source: "loop", step: 0 }), messagesVersion: '"2"' });
    expect(got.byId).toEqual(lgCheckpoint("1ef0-a", null, "lg-c1", { source: "input", step: -1 }));
    expect(got.missing).toBeUndefined();
    expect(got.point).toEqual({
      checkpointId: "1ef0-a",
      fpCheckpointId: "lg-c1",
      branchId: "lg-b1",
      position: 2,
      headHash: checkpoint("lg-c1", "lg", 2).headHash,
      source: "input",
      seq: got.seqC1,
    });
    expect(got).toMatchObject({ latestPoint: "1ef0-b", points: ["1ef0-a", "1ef0-b"], inFp: "1ef0-b", uses: [true, false] });
    expect(got).toMatchObject({ hasChild: [true, false], landed: [true, false], since: [true, false] });
    expect(got.first).toEqual([2, 4, 4, undefined, undefined, undefined]);
    expect(got.latestOn).toEqual(["1ef0-b", undefined]);
  });

  it("lists a user's LangGraph checkpoints newest first, by thread and by metadata", async () => {
    const ids = async (filter: object) =>
      (await store().query((tx) => tx.langgraph.listCheckpoints({ userId: "alice", metadata: [], ...filter }))).map((c) => c.checkpointId);
    expect(await ids({})).toEqual(["1ef0-b", "1ef0-a"]);
    expect(await ids({ threadId: "t1", checkpointNs: "" })).toEqual(["1ef0-b", "1ef0-a"]);
    expect(await ids({ threadId: "t2" })).toEqual([]);
    expect(await ids({ checkpointId: "1ef0-a" })).toEqual(["1ef0-a"]);
    expect(await ids({ before: "1ef0-b" })).toEqual(["1ef0-a"]);
    expect(await ids({ metadata: [["source", '"loop"']] })).toEqual(["1ef0-b"]);
    expect(await ids({ metadata: [["step", "-1"]] })).toEqual(["1ef0-a"]);
    expect(await ids({ limit: 1 })).toEqual(["1ef0-b"]);
    expect(await store().query((tx) => tx.langgraph.listCheckpoints({ userId: "bob", metadata: [] }))).toEqual([]);
    const [row] = await store().query((tx) => tx.langgraph.listCheckpoints({ userId: "alice", metadata: [], limit: 1 }));
    expect(row).toMatchObject({ threadId: "t1", checkpointNs: "" });
  });

  it("keeps a channel value per version once, and pending writes: kept first, or replaced when asked", async () => {
    await store().write({ sessionId: "lg" }, function* (tx) {
      const lg = tx.langgraph;
      yield* lg.insertBlob({ sessionId: "lg", channel: "memory", version: "1", type: "json", value: json({ m: 1 }) });
      yield* lg.insertBlob({ sessionId: "lg", channel: "memory", version: "1", type: "json", value: json({ m: "ignored" }) });
      yield* lg.insertBlob({ sessionId: "lg", channel: "memory", version: "2", type: "bytes", value: Buffer.alloc(0) });
      yield* lg.insertWrites([write("t-b", 0, "one"), write("t-a", 1, "two")], false);
      yield* lg.insertWrites([write("t-b", 0, "ignored")], false);
      yield* lg.insertWrites([write("t-a", 1, "replaced")], true);
      yield* lg.insertWrites([], true);
    });
    const got = await store().read(function* (tx) {
      const lg = tx.langgraph;
      return {
        blob: yield* lg.getBlob("lg", "memory", "1"),
        empty: (yield* lg.getBlob("lg", "memory", "2"))?.value,
        none: yield* lg.getBlob("lg", "memory", "3"),
        writes: new Map((yield* lg.writesOf("lg", "1ef0-b")).map((w) => [`${w.taskId}/${w.idx}`, w.value.toString()])),
        noWrites: yield* lg.writesOf("lg", "1ef0-a"),
        blobKeys: (yield* lg.blobKeysOf("lg")).map((k) => k.version).sort(),
        writeKeys: (yield* lg.writeKeysOf("lg")).length,
        rows: (yield* lg.checkpointsOf("lg")).length,
      };
    });
    expect(got.blob).toEqual({ sessionId: "lg", channel: "memory", version: "1", type: "json", value: json({ m: 1 }) });
    expect(got.empty).toEqual(Buffer.alloc(0));
    expect(got.none).toBeUndefined();
    expect(got.writes).toEqual(
      new Map([
        ["t-b/0", '"one"'],
        ["t-a/1", '"replaced"'],
      ]),
    );
    expect(got).toMatchObject({ noWrites: [], blobKeys: ["1", "2"], writeKeys: 2, rows: 2 });
  });

  it("reads a session's channel values and pending writes whole (an export's), and only that session's", async () => {
    await seed(store(), "lg-x", "alice");
    await store().write({ sessionId: "lg-x" }, function* (tx) {
      const lg = tx.langgraph;
      yield* lg.insertBlob({ sessionId: "lg-x", channel: "count", version: "1.5", type: "json", value: json(1) });
      yield* lg.insertBlob({ sessionId: "lg-x", channel: "count", version: "2.5", type: "bytes", value: Buffer.from([0, 255]) });
      // Writes under a checkpoint id no row holds (a head synthesized at a point) are the session's too.
      yield* lg.insertWrites([{ ...write("t-x", 0, "w0"), sessionId: "lg-x", checkpointId: "synth", taskPath: "~ns" }], false);
      yield* lg.insertWrites([{ ...write("t-x", 1, "w1"), sessionId: "lg-x" }], false);
    });
    const got = await store().read(function* (tx) {
      const lg = tx.langgraph;
      return { blobs: yield* lg.blobsOf("lg-x"), writes: yield* lg.allWritesOf("lg-x"), none: yield* lg.blobsOf("lg-none") };
    });
    const byVersion = [...got.blobs].sort((a, b) => (a.version < b.version ? -1 : 1));
    expect(byVersion).toEqual([
      { sessionId: "lg-x", channel: "count", version: "1.5", type: "json", value: json(1) },
      { sessionId: "lg-x", channel: "count", version: "2.5", type: "bytes", value: Buffer.from([0, 255]) },
    ]);
    const byIdx = [...got.writes].sort((a, b) => a.idx - b.idx);
    expect(byIdx).toEqual([
      { ...write("t-x", 0, "w0"), sessionId: "lg-x", checkpointId: "synth", taskPath: "~ns" },
      { ...write("t-x", 1, "w1"), sessionId: "lg-x" },
    ]);
    expect(got.none).toEqual([]);
    // Another session's rows are not among them (the "lg" session holds values and writes of its own).
    const others = await store().read((tx) => tx.langgraph.allWritesOf("lg"));
    expect(others.length).toBeGreaterThan(0);
    expect(others.every((w) => w.sessionId === "lg")).toBe(true);
  });

  it("deletes checkpoint rows, writes and values by key, and a session's thread rows whole", async () => {
    await store().write({ sessionId: "lg" }, function* (tx) {
      const lg = tx.langgraph;
      yield* lg.deleteWrites("lg", [{ checkpointId: "1ef0-b", taskId: "t-b", idx: 0 }]);
      yield* lg.deleteBlobs("lg", [{ channel: "memory", version: "2" }]);
    });
    expect((await store().read((tx) => tx.langgraph.writesOf("lg", "1ef0-b"))).map((w) => w.taskId)).toEqual(["t-a"]);
    expect(await store().read((tx) => tx.langgraph.getBlob("lg", "memory", "2"))).toBeUndefined();
    await store().write({ sessionId: "lg" }, function* (tx) {
      yield* tx.langgraph.deleteWritesOf("lg", ["1ef0-b"]);
      yield* tx.langgraph.deleteCheckpointRows("lg", ["1ef0-b"]);
    });
    expect(await store().read((tx) => tx.langgraph.writesOf("lg", "1ef0-b"))).toEqual([]);
    expect((await store().read((tx) => tx.langgraph.latestPoint("lg")))?.checkpointId).toBe("1ef0-a");
    await store().write({ sessionId: "lg" }, (tx) => tx.langgraph.deleteThreadRows("lg"));
    const after = await store().read(function* (tx) {
      const lg = tx.langgraph;
      return [yield* lg.threadOfSession("lg"), yield* lg.getCheckpoint("lg"), yield* lg.getBlob("lg", "memory", "1")];
    });
    expect(after).toEqual([undefined, undefined, undefined]);
    expect(await store().read((tx) => tx.langgraph.isThreadSession("lg-bob"))).toBe(true);
  });
}
