// Spec: the request ledger: a request id is applied once per session; a second unit recording it writes nothing.
import { expect, it } from "vitest";
import { RequestTakenError, type RequestRow, type Store } from "../../../src/store/port/index.js";
import { at, entry, seed } from "./fixture.js";

const request = (sessionId: string, requestId: string, over: Partial<RequestRow> = {}): RequestRow => ({
  sessionId,
  requestId,
  fingerprint: "f1",
  answer: '{"id":"x"}',
  createdAt: at(90),
  ...over,
});

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
}
