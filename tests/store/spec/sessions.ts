// Spec: sessions, their listings, events, the timeline, imported calls, retention marks and deletion.
import { expect, it } from "vitest";
import type { Store, TimelineKey } from "../../../src/store/port/index.js";
import { at, checkpoint, entry, rootBranch, seed, session } from "./fixture.js";

export function sessionsSpec(store: () => Store): void {
  it("reads a session back exactly as written, with its flags off, and nothing for an unknown id", async () => {
    await store().write({ sessionId: "s1" }, function* (tx) {
      yield* tx.insertSession(session("s1", "sue", { title: "First", metadata: '{"b":1,"a":[1,2]}', originSessionId: "s0" }));
      yield* tx.insertBranch(rootBranch("s1"));
    });
    const row = await store().query((tx) => tx.getSession("s1"));
    expect(row).toMatchObject({
      id: "s1",
      userId: "sue",
      title: "First",
      metadata: '{"b":1,"a":[1,2]}',
      currentBranchId: "s1-b1",
      originSessionId: "s0",
      originCheckpointId: null,
      hasTools: false,
      hasWorkspace: false,
      retention: null,
      createdAt: at(0),
      updatedAt: at(0),
    });
    expect(typeof row!.seq).toBe("number");
    expect(await store().query((tx) => tx.getSession("nope"))).toBeUndefined();
    expect(await store().query((tx) => tx.getSessionInfo("nope"))).toBeUndefined();
  });

  it("updates the title, metadata, flags and current branch", async () => {
    await store().write({ sessionId: "s1" }, function* (tx) {
      yield* tx.updateSession("s1", { title: "Renamed" }, at(2));
      yield* tx.markHasTools("s1");
      yield* tx.markHasTools("s1");
      yield* tx.insertBranch(rootBranch("s1", { id: "s1-b2", reason: "edit" }));
      yield* tx.setCurrentBranch("s1", "s1-b2", at(3));
    });
    const row = await store().query((tx) => tx.getSession("s1"));
    expect(row).toMatchObject({ title: "Renamed", metadata: '{"b":1,"a":[1,2]}', hasTools: true, currentBranchId: "s1-b2" });
    expect(row!.updatedAt).toBeGreaterThanOrEqual(at(2));
  });

  it("lists a user's sessions newest first, with the last message and count, a page at a time", async () => {
    for (const id of ["l1", "l2", "l3"]) await seed(store(), id, "lister", 3);
    await seed(store(), "l4", "lister-other");
    const all = await store().query((tx) => tx.listSessions("lister", undefined, 10));
    expect(all.map((s) => s.id)).toEqual(["l3", "l2", "l1"]);
    expect(all[0]!.messageCount).toBe(3);
    expect(all[0]!.lastMessage).toMatchObject({ id: "l3-b1-e3", branchId: "l3-b1", position: 3, content: '{"text":"m3"}' });
    const page = await store().query((tx) => tx.listSessions("lister", all[0]!.seq, 1));
    expect(page.map((s) => s.id)).toEqual(["l2"]);
    expect(await store().query((tx) => tx.countUserSessions("lister"))).toBe(3);
    // `getSessionInfo`'s updatedAt counts the current branch's last entry; `getSession`'s does not.
    expect((await store().query((tx) => tx.getSession("l1")))?.updatedAt).toBe(at(0));
    expect((await store().read((tx) => tx.getSessionInfo("l1")))?.updatedAt).toBe(at(13));
    expect(await store().query((tx) => tx.countUserSessions("nobody"))).toBe(0);
    const ids = await store().query((tx) => tx.userSessionIds("lister", undefined, 2));
    expect(ids.map((r) => r.id)).toEqual(["l3", "l2"]);
    expect((await store().query((tx) => tx.userSessionIds("lister", ids[1]!.seq, 5))).map((r) => r.id)).toEqual(["l1"]);
    const ordered = await store().query((tx) => tx.allSessionIds());
    expect(ordered.indexOf("l1")).toBeLessThan(ordered.indexOf("l3"));
    const everyone = await store().query((tx) => tx.listAllSessions(undefined, 1000));
    expect(everyone.map((s) => s.id)).toEqual(expect.arrayContaining(["l1", "l4"]));
    expect(everyone.findIndex((s) => s.id === "l4")).toBeLessThan(everyone.findIndex((s) => s.id === "l1"));
  });

  it("lists users by id after a cursor, each with their session count", async () => {
    const users = await store().query((tx) => tx.listUsers(undefined, 1000));
    const lister = users.find((u) => u.userId === "lister");
    expect(lister?.sessions).toBe(3);
    const ids = users.map((u) => u.userId);
    expect(new Set(ids).size).toBe(ids.length);
    const after = await store().query((tx) => tx.listUsers("lister", 1000));
    expect(after.map((u) => u.userId)).not.toContain("lister");
    expect(after.map((u) => u.userId)).toContain("lister-other");
  });

  it("keeps events in the order they happened, and pages a user's timeline newest first", async () => {
    await seed(store(), "t1", "tina", 2);
    await store().write({ sessionId: "t1" }, function* (tx) {
      yield* tx.insertEvent({ sessionId: "t1", kind: "branch", refId: "x", branchId: "t1-b1", detail: '{"why":"x"}', createdAt: at(20) });
      yield* tx.insertEvent({ sessionId: "t1", kind: "switch", refId: "y", branchId: "t1-b1", detail: null, createdAt: at(21) });
    });
    const events = await store().query((tx) => tx.sessionEvents("t1"));
    expect(events.map((e) => [e.kind, e.detail, e.createdAt])).toEqual([
      ["branch", '{"why":"x"}', at(20)],
      ["switch", null, at(21)],
    ]);
    const rows = await store().read((tx) => tx.timeline("tina", "t1", undefined, 100, at(0)));
    expect(rows.map((r) => r.refId)).toEqual(["y", "x", "t1-b1-e2", "t1-b1-e1"]);
    const firstPage = await store().read((tx) => tx.timeline("tina", "t1", undefined, 2, at(0)));
    const rest = await store().read((tx) => tx.timeline("tina", "t1", firstPage[1], 100, at(0)));
    expect([...firstPage, ...rest].map((r) => r.refId)).toEqual(rows.map((r) => r.refId));
  });

  it("leaves checkpoints expired at `now` out of the timeline, and its pages still join up", async () => {
    await seed(store(), "tx1", "xena", 2);
    await store().write({ sessionId: "tx1" }, function* (tx) {
      // Expiring at at(50), at(60) and never, interleaved by time and seq with each other.
      const cp = (id: string, n: number, expiresAt: number | null) =>
        checkpoint(id, "tx1", 2, { userId: "xena", createdAt: at(n), expiresAt });
      yield* tx.insertCheckpoint(cp("x1", 40, at(50)), at(40));
      yield* tx.insertCheckpoint(cp("x2", 41, null), at(41));
      yield* tx.insertCheckpoint(cp("x3", 42, at(60)), at(42));
      yield* tx.insertCheckpoint(cp("x4", 43, at(50)), at(43));
      yield* tx.insertCheckpoint(cp("x5", 44, null), at(44));
    });
    const all = async (now: number, limit: number) => {
      const rows: string[] = [];
      let before: TimelineKey | undefined;
      for (;;) {
        const page = await store().read((tx) => tx.timeline("xena", "tx1", before, limit, now));
        rows.push(...page.map((r) => r.refId));
        if (page.length < limit) return rows;
        before = page[page.length - 1];
      }
    };
    const messages = ["tx1-b1-e2", "tx1-b1-e1"];
    expect(await all(at(49), 100)).toEqual(["x5", "x4", "x3", "x2", "x1", ...messages]);
    // Expired exactly at `now` is expired, as listCheckpoints has it.
    expect(await all(at(50), 100)).toEqual(["x5", "x3", "x2", ...messages]);
    expect(await all(at(61), 100)).toEqual(["x5", "x2", ...messages]);
    for (const limit of [1, 2, 3]) expect(await all(at(50), limit)).toEqual(["x5", "x3", "x2", ...messages]);
    // The store is shared by the specs that follow: they expect no other session's expired checkpoints.
    await store().write({ sessionId: "tx1" }, (tx) => tx.deleteSession("tx1"));
  });

  it("sorts the timeline of a session marked as having times that go back", async () => {
    await seed(store(), "tu", "tuva");
    await store().write({ sessionId: "tu" }, function* (tx) {
      // An imported document's times: position 2 is older than position 1.
      for (const [position, time] of [
        [1, 20],
        [2, 10],
        [3, 30],
      ] as const)
        yield* tx.insertEntry(entry("tu-b1", position, { createdAt: at(time) }));
      yield* tx.markTimesUnordered("tu");
    });
    const page = await store().read((tx) => tx.timeline("tuva", "tu", undefined, 2, at(0)));
    expect(page.map((r) => [r.refId, r.createdAt])).toEqual([
      ["tu-b1-e3", at(30)],
      ["tu-b1-e1", at(20)],
    ]);
    const rest = await store().read((tx) => tx.timeline("tuva", "tu", page[1], 100, at(0)));
    expect(rest.map((r) => r.refId)).toEqual(["tu-b1-e2"]);
  });

  it("finds the first taken id of an import, and records imported calls", async () => {
    const none = { sessions: ["zz"], branches: ["zz-b"], entries: ["zz-e"], checkpoints: ["zz-c"] };
    expect(await store().query((tx) => tx.takenId(none))).toBeUndefined();
    expect(await store().query((tx) => tx.takenId({ ...none, branches: ["t1-b1"], entries: ["t1-b1-e1"] }))).toBe("t1-b1");
    expect(await store().query((tx) => tx.takenId({ ...none, entries: ["t1-b1-e1"] }))).toBe("t1-b1-e1");
    await store().write({ sessionId: "t1" }, (tx) => tx.insertImportedCall("t1-b1-e1", "t1"));
    expect(await store().query((tx) => tx.importedCalls("t1"))).toEqual(new Set(["t1-b1-e1"]));
  });

  it("sets and clears a retention policy", async () => {
    await store().write({ sessionId: "t1" }, (tx) => tx.setRetention("t1", '{"keepLast":2}', 7));
    expect(await store().query((tx) => tx.getSession("t1"))).toMatchObject({ retention: '{"keepLast":2}', retentionAgedAt: 7 });
    expect(await store().query((tx) => tx.sessionsWithRetention("t1"))).toEqual(["t1"]);
    expect(await store().query((tx) => tx.sessionsWithRetention())).toContain("t1");
    await store().write({ sessionId: "t1" }, (tx) => tx.setRetention("t1", null, 0));
    expect(await store().query((tx) => tx.sessionsWithRetention("t1"))).toEqual([]);
  });

  it("deletes a session with everything it recorded, and leaves others alone", async () => {
    await seed(store(), "d1", "dora", 2);
    await seed(store(), "d2", "dora", 1);
    await store().write({ sessionId: "d1" }, function* (tx) {
      yield* tx.insertCheckpoint(checkpoint("d1-cp", "d1", 2, { userId: "dora" }), at(40));
      yield* tx.insertEvent({ sessionId: "d1", kind: "k", refId: "r", branchId: "d1-b1", detail: null, createdAt: at(30) });
      yield* tx.insertEntry(entry("d1-b1", 3, { kind: "tool", role: null, tool: "t", callId: "c", content: "{}" }));
      yield* tx.insertImportedCall("d1-b1-e3", "d1");
      yield* tx.putCallPaths("d1-b1-e3", "d1", ["a.txt"]);
      yield* tx.keepReplayResult("d1-b1-e3", "d1", '"r1"', at(41));
      yield* tx.setAside("d1-b1-e3", "d1", "d1-b1", 3, at(41));
    });
    await store().write({ sessionId: "d2" }, function* (tx) {
      yield* tx.insertEntry(entry("d2-b1", 2, { kind: "tool", role: null, tool: "t", callId: "c", content: "{}" }));
      yield* tx.putCallPaths("d2-b1-e2", "d2", ["b.txt"]);
      yield* tx.keepReplayResult("d2-b1-e2", "d2", '"r2"', at(42));
      yield* tx.setAside("d2-b1-e2", "d2", "d2-b1", 2, at(42));
    });
    await store().write({ sessionId: "d1" }, (tx) => tx.deleteSession("d1"));
    const after = await store().read(function* (tx) {
      return {
        session: yield* tx.getSession("d1"),
        branches: yield* tx.listBranches("d1"),
        entry: yield* tx.getEntry("d1-b1-e1"),
        checkpoint: yield* tx.getCheckpoint("d1-cp"),
        events: yield* tx.sessionEvents("d1"),
        imported: yield* tx.importedCalls("d1"),
        paths: [yield* tx.callPaths("d1-b1-e3"), yield* tx.pathChangingCalls("d1")],
        other: yield* tx.getEntry("d2-b1-e1"),
        otherPaths: yield* tx.callPaths("d2-b1-e2"),
        replay: yield* tx.lastReplay("d1", "d1-b1-e3"),
        otherReplay: yield* tx.lastReplay("d2", "d2-b1-e2"),
        aside: [yield* tx.setAsideCalls("d1"), yield* tx.setAsideCalls("d2")],
      };
    });
    expect(after).toMatchObject({ session: undefined, branches: [], entry: undefined, checkpoint: undefined, events: [] });
    expect(after.imported.size).toBe(0);
    expect(after.paths).toEqual([undefined, []]);
    expect(after.otherPaths).toEqual(["b.txt"]);
    expect([after.replay, after.otherReplay]).toEqual([undefined, { result: '"r2"' }]);
    expect(after.aside).toEqual([[], [{ id: "d2-b1-e2", branchId: "d2-b1", position: 2 }]]);
    expect(after.other?.id).toBe("d2-b1-e1");
    expect(await store().query((tx) => tx.countUserSessions("dora"))).toBe(1);
  });
}
