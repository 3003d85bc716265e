// Spec: units of work. A write commits all or nothing; reads see one snapshot; a closed store says so.
import { expect, it } from "vitest";
import type { Store } from "../../../src/store/port/index.js";
import { entry, rootBranch, seed, session } from "./fixture.js";
import type { OpenStore } from "./store-spec.js";

export function unitsSpec(store: () => Store, open: OpenStore): void {
  it("says how it owns moves and whether its files are local", () => {
    expect(["process", "lease"]).toContain(store().capabilities.ownership);
    expect(typeof store().capabilities.local).toBe("boolean");
  });

  it("commits a write unit and returns its body's value, through write, read and query", async () => {
    const value = await store().write({ sessionId: "u1" }, function* (tx) {
      yield* tx.insertSession(session("u1", "alice"));
      yield* tx.insertBranch(rootBranch("u1"));
      return 42;
    });
    expect(value).toBe(42);
    expect((await store().read((tx) => tx.getSession("u1")))?.id).toBe("u1");
    expect((await store().query((tx) => tx.getBranch("u1-b1")))?.sessionId).toBe("u1");
    expect(store().inUnit).toBe(false);
  });

  it("reads at once with readNow where the store is synchronous (no promise to wait for)", () => {
    const readNow = store().readNow?.bind(store());
    if (!readNow) return;
    expect(readNow((tx) => tx.getSession("u1"))?.id).toBe("u1");
    expect(readNow((tx) => tx.getSession("nope"))).toBeUndefined();
    expect(store().inUnit).toBe(false);
  });

  it("rolls a write unit back whole when its body throws, and passes the error on", async () => {
    const boom = new Error("boom");
    await expect(
      store().write({ sessionId: "u2" }, function* (tx) {
        yield* tx.insertSession(session("u2", "alice"));
        yield* tx.insertBranch(rootBranch("u2"));
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(await store().query((tx) => tx.getSession("u2"))).toBeUndefined();
    expect(await store().query((tx) => tx.getBranch("u2-b1"))).toBeUndefined();
  });

  it("rolls back a unit whose statement fails (a duplicate key), leaving earlier writes of it undone", async () => {
    await seed(store(), "u3");
    await expect(
      store().write({ sessionId: "u3" }, function* (tx) {
        yield* tx.insertEntry(entry("u3-b1", 1));
        yield* tx.insertSession(session("u3", "alice"));
      }),
    ).rejects.toBeDefined();
    expect(await store().query((tx) => tx.getEntry("u3-b1-e1"))).toBeUndefined();
  });

  it("takes every write scope: one session, several, and global", async () => {
    await store().write({ sessionIds: ["u5", "u4"] }, function* (tx) {
      yield* tx.insertSession(session("u4", "alice"));
      yield* tx.insertSession(session("u5", "alice"));
    });
    await store().write({ global: true }, (tx) => tx.updateSession("u4", { title: "t" }, 5));
    expect((await store().query((tx) => tx.getSession("u4")))?.title).toBe("t");
  });

  it("runs units one after another on one handle, and concurrently started ones all commit", async () => {
    await Promise.all(["c1", "c2", "c3", "c4"].map((id) => seed(store(), id, "carol", 2)));
    expect((await store().query((tx) => tx.userSessionIds("carol", undefined, 10))).map((r) => r.id).sort()).toEqual([
      "c1",
      "c2",
      "c3",
      "c4",
    ]);
  });

  it("dumps its rows, tells its size, and lists its own files", async () => {
    expect(await store().dump()).toContain("u1-b1");
    expect(await store().sizeBytes()).toBeGreaterThan(0);
    for (const file of store().databaseFiles()) expect(file.startsWith("/") || /^[A-Za-z]:\\/.test(file)).toBe(true);
    await store().vacuum();
    expect((await store().query((tx) => tx.getSession("u1")))?.id).toBe("u1");
  });

  it("closes: closed turns true and a closed store refuses units", async () => {
    const other = await open();
    expect(other.closed).toBe(false);
    await other.close();
    expect(other.closed).toBe(true);
    await expect(other.read((tx) => tx.getSession("u1"))).rejects.toBeDefined();
  });
}
