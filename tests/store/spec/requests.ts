// Spec: the request ledger: a request id is applied once per session; a second unit recording it writes nothing.
import { expect, it } from "vitest";
import { RequestTakenError, type RequestRow, type Store } from "../../../src/store/port/index.js";
import { at, checkpoint, entry, seed } from "./fixture.js";

const request = (sessionId: string, requestId: string, over: Partial<RequestRow> = {}): RequestRow => ({
  sessionId,
  requestId,
  fingerprint: "f1",
  answer: '{"id":"x"}',
  createdAt: at(90),
  checkpointId: null,
  ...over,
});

const kept = { fingerprint: "=turn", answer: "[1, 2, 60000]" };

export function requestsSpec(store: () => Store): void {
  it("records a request with its unit's write and reads it back", async () => {
    await seed(store(), "rq", "alice", 1);
    await seed(store(), "rq2", "alice");
    await store().write({ sessionId: "rq" }, function* (tx) {
      yield* tx.insertEntry(entry("rq-b1", 2));
      yield* tx.insertRequest(request("rq", "r1"));
    });
    expect(await store().read((tx) => tx.getRequest("rq", "r1"))).toEqual(request("rq", "r1"));
    expect(await store().read((tx) => tx.getRequest("rq", "r2"))).toBeUndefined();
    expect(await store().read((tx) => tx.getRequest("rq2", "r1"))).toBeUndefined();
  });

  it("refuses a taken request id with RequestTakenError and rolls the whole unit back", async () => {
    await expect(
      store().write({ sessionId: "rq" }, function* (tx) {
        yield* tx.insertEntry(entry("rq-b1", 3));
        yield* tx.insertRequest(request("rq", "r1", { fingerprint: "f2", answer: "{}" }));
      }),
    ).rejects.toBeInstanceOf(RequestTakenError);
    expect(await store().read((tx) => tx.getEntry("rq-b1-e3"))).toBeUndefined();
    expect((await store().read((tx) => tx.getRequest("rq", "r1")))?.fingerprint).toBe("f1");
    // The same id in another session is another request.
    await store().write({ sessionId: "rq2" }, (tx) => tx.insertRequest(request("rq2", "r1")));
    expect((await store().read((tx) => tx.getRequest("rq2", "r1")))?.sessionId).toBe("rq2");
  });

  it("keeps a turn's request on its checkpoint's row, and refuses its id anywhere else in the session", async () => {
    await seed(store(), "rk", "alice", 4);
    await store().write({ sessionId: "rk" }, (tx) =>
      tx.insertCheckpoint({ ...checkpoint("rk-c1", "rk", 2), request: { id: "t1", ...kept } }, at(41)),
    );
    expect(await store().read((tx) => tx.getRequest("rk", "t1"))).toEqual({
      sessionId: "rk",
      requestId: "t1",
      ...kept,
      createdAt: at(40),
      checkpointId: "rk-c1",
    });
    // A second checkpoint with the id, and the ledger's table given it, are both refused; so is the reverse.
    const refused = [
      (tx: Parameters<Parameters<Store["write"]>[1]>[0]) =>
        tx.insertCheckpoint({ ...checkpoint("rk-c2", "rk", 4), request: { id: "t1", ...kept } }, at(42)),
      (tx: Parameters<Parameters<Store["write"]>[1]>[0]) => tx.insertRequest(request("rk", "t1")),
    ];
    for (const write of refused) {
      await expect(
        store().write({ sessionId: "rk" }, function* (tx) {
          yield* tx.insertEntry(entry("rk-b1", 5));
          yield* write(tx);
        }),
      ).rejects.toBeInstanceOf(RequestTakenError);
      expect(await store().read((tx) => tx.getEntry("rk-b1-e5"))).toBeUndefined();
    }
    await store().write({ sessionId: "rk" }, (tx) => tx.insertRequest(request("rk", "a1")));
    await expect(
      store().write({ sessionId: "rk" }, (tx) =>
        tx.insertCheckpoint({ ...checkpoint("rk-c3", "rk", 4), request: { id: "a1", ...kept } }, at(43)),
      ),
    ).rejects.toBeInstanceOf(RequestTakenError);
    expect(await store().read((tx) => tx.getCheckpoint("rk-c3"))).toBeUndefined();
  });

  it("forgets the requests it is given, in the ledger and on checkpoints' rows, and no other", async () => {
    await seed(store(), "rf", "alice", 2);
    await seed(store(), "rf2", "alice");
    await store().write({ sessionId: "rf" }, function* (tx) {
      yield* tx.insertRequest(request("rf", "f1"));
      yield* tx.insertRequest(request("rf", "keep"));
      yield* tx.insertCheckpoint({ ...checkpoint("rf-c1", "rf", 2), request: { id: "t1", ...kept } }, at(41));
    });
    await store().write({ sessionId: "rf2" }, (tx) => tx.insertRequest(request("rf2", "f1")));
    await store().write({ sessionId: "rf" }, (tx) => tx.forgetRequests("rf", ["f1", "t1", "never"]));
    expect(await store().read((tx) => tx.getRequest("rf", "f1"))).toBeUndefined();
    expect(await store().read((tx) => tx.getRequest("rf", "t1"))).toBeUndefined();
    expect(await store().read((tx) => tx.getCheckpoint("rf-c1"))).toBeDefined();
    expect((await store().read((tx) => tx.getRequest("rf", "keep")))?.requestId).toBe("keep");
    expect((await store().read((tx) => tx.getRequest("rf2", "f1")))?.requestId).toBe("f1");
    // Forgotten ids are free again.
    await store().write({ sessionId: "rf" }, (tx) => tx.insertRequest(request("rf", "t1")));
    expect((await store().read((tx) => tx.getRequest("rf", "t1")))?.checkpointId).toBeNull();
  });

  it("moves a checkpoint's request to the ledger's table when the checkpoint is deleted, the checkpoint whole", async () => {
    await seed(store(), "rd", "alice", 4);
    await store().write({ sessionId: "rd" }, function* (tx) {
      yield* tx.insertCheckpoint(
        { ...checkpoint("rd-c1", "rd", 2, { name: "n", metadata: '{"k":[1]}' }), request: { id: "t1", ...kept } },
        at(41),
      );
      yield* tx.insertCheckpoint(
        {
          ...checkpoint("rd-c2", "rd", 4, { expiresAt: at(45) }),
          request: { id: "t2", fingerprint: "=checkpoint", answer: "[0, 0, null]" },
        },
        at(42),
      );
    });
    await store().write({ sessionId: "rd" }, (tx) => tx.deleteCheckpoint("rd-c1"));
    await store().write({ sessionId: "rd" }, (tx) => tx.deleteExpiredCheckpoints(at(46), "rd"));
    const t1 = await store().read((tx) => tx.getRequest("rd", "t1"));
    const t2 = await store().read((tx) => tx.getRequest("rd", "t2"));
    expect(t1).toMatchObject({ fingerprint: "=turn", checkpointId: null });
    expect(JSON.parse(t1!.answer)).toEqual([
      ["rd-b1", 1, 2],
      ["rd-c1", "rd", "rd-b1", 2, "n", false, { k: [1] }, "alice", checkpoint("rd-c1", "rd", 2).checksum, at(40), null],
      60000,
    ]);
    expect(JSON.parse(t2!.answer)).toEqual([
      [],
      ["rd-c2", "rd", "rd-b1", 4, null, false, null, "alice", checkpoint("rd-c2", "rd", 4).checksum, at(40), at(45)],
      null,
    ]);
  });
}
