// Spec: branches, the entry log read by lineage, tool calls and their results, and content-addressed state snapshots.
import { expect, it } from "vitest";
import type { Store } from "../../../src/store/port/index.js";
import { at, checkpoint, entry, hex, rootBranch, seed } from "./fixture.js";

/** e1..e4 on the root branch, a checkpoint at 2, branch b2 forked there with e3' and e4', b3 forked at position 0. */
async function tree(store: Store): Promise<void> {
  await seed(store, "e", "erin", 4);
  await store.write({ sessionId: "e" }, function* (tx) {
    yield* tx.insertCheckpoint(checkpoint("e-cp", "e", 2, { userId: "erin" }), at(40));
    yield* tx.insertBranch(
      rootBranch("e", {
        id: "e-b2",
        parentId: "e-b1",
        forkCheckpointId: "e-cp",
        forkPosition: 2,
        forkEntryId: "e-b1-e2",
        reason: "rollback",
      }),
    );
    yield* tx.insertEntry(entry("e-b2", 3, { createdAt: at(50) }));
    yield* tx.insertEntry(entry("e-b2", 4, { createdAt: at(51) }));
    yield* tx.insertBranch(rootBranch("e", { id: "e-b3", parentId: "e-b1", forkPosition: 0, reason: "edit" }));
    yield* tx.setCurrentBranch("e", "e-b2", at(52));
  });
}

export function entriesSpec(store: () => Store): void {
  it("keeps branches: by id, per session, by fork point and checkpoint, with their heads", async () => {
    await tree(store());
    const got = await store().read(function* (tx) {
      return {
        branch: yield* tx.getBranch("e-b2"),
        missing: yield* tx.getBranch("nope"),
        list: (yield* tx.listBranches("e")).map((b) => b.id),
        atZero: (yield* tx.branchesForkedAt("e", null)).map((b) => b.id),
        atEntry: (yield* tx.branchesForkedAt("e", "e-b1-e2")).map((b) => b.id),
        fromCp: yield* tx.countBranchesForkedFrom("e-cp"),
        count: yield* tx.countBranches("e"),
        heads: yield* tx.branchHeads("e"),
      };
    });
    expect(got.branch).toEqual({
      id: "e-b2",
      sessionId: "e",
      parentId: "e-b1",
      forkCheckpointId: "e-cp",
      forkPosition: 2,
      forkEntryId: "e-b1-e2",
      name: null,
      reason: "rollback",
      createdAt: at(0),
    });
    expect(got.missing).toBeUndefined();
    expect(got.list.sort()).toEqual(["e-b1", "e-b2", "e-b3"]);
    expect(got.atZero.map(String)).toContain("e-b3");
    expect(got.atEntry).toEqual(["e-b2"]);
    expect(got.fromCp).toBe(1);
    expect(got.count).toBe(3);
    expect(got.heads).toEqual(
      new Map([
        ["e-b1", 4],
        ["e-b2", 4],
        ["e-b3", 0],
      ]),
    );
    await store().write({ sessionId: "e" }, (tx) => tx.setBranchName("e-b2", "retry"));
    expect((await store().query((tx) => tx.getBranch("e-b2")))?.name).toBe("retry");
  });

  it("reads entries back exactly, and a branch's head and current entry", async () => {
    const got = await store().read(function* (tx) {
      return {
        entry: yield* tx.getEntry("e-b1-e3"),
        missing: yield* tx.getEntry("nope"),
        lastOwn: yield* tx.lastOwnEntry("e-b2"),
        lastOwnEmpty: yield* tx.lastOwnEntry("e-b3"),
        head: [yield* tx.headPosition("e-b2"), yield* tx.headPosition("e-b3"), yield* tx.headPosition("nope")],
        current: yield* tx.currentOf("e"),
        noCurrent: yield* tx.currentOf("nope"),
        ownAt: yield* tx.ownEntryAt("e-b1", 2),
        ownAtMissing: yield* tx.ownEntryAt("e-b2", 2),
        withBase: yield* tx.entryWithBase("e-b2-e4"),
        endingAt: (yield* tx.branchesEndingAt("e", "e-b1-e4")).map((b) => b.id),
      };
    });
    expect(got.entry).toMatchObject(entry("e-b1", 3));
    expect(typeof got.entry!.seq).toBe("number");
    expect(got.entry!.createdAt).toBe(at(13));
    expect(got.missing).toBeUndefined();
    expect(got.lastOwn).toMatchObject({ id: "e-b2-e4", position: 4, hash: hex("e-b2/4"), createdAt: at(51) });
    expect(got.lastOwnEmpty).toBeUndefined();
    expect(got.head).toEqual([4, 0, undefined]);
    expect(got.current?.session.id).toBe("e");
    expect(got.current?.branch.id).toBe("e-b2");
    expect(got.current?.last?.id).toBe("e-b2-e4");
    expect(got.noCurrent).toBeUndefined();
    expect(got.ownAt?.id).toBe("e-b1-e2");
    expect(got.ownAtMissing).toBeUndefined();
    expect(got.withBase?.entry.id).toBe("e-b2-e4");
    expect(got.withBase?.branch.id).toBe("e-b2");
    expect(got.withBase?.base?.id).toBe("e-b2-e3");
    expect(got.endingAt).toEqual(["e-b1"]);
  });

  it("walks a lineage root first, segment by segment, up to a position", async () => {
    const walk = (branchId: string, upTo?: number) =>
      store().read(function* (tx) {
        const segments = yield* tx.lineage(branchId, upTo);
        const entries: string[] = [];
        const messages: string[] = [];
        const last: (string | undefined)[] = [];
        for (const segment of segments) {
          for (const e of yield* tx.segmentEntries(segment)) entries.push(e.id);
          yield* tx.segmentMessages(segment, (m) => `${m.id}:${m.role}`, messages);
          last.push((yield* tx.lastSegmentMessage(segment))?.id);
        }
        return { segments, entries, messages, last };
      });
    const b2 = await walk("e-b2");
    expect(b2.segments).toEqual([
      { branchId: "e-b1", after: 0, upTo: 2 },
      { branchId: "e-b2", after: 2, upTo: expect.any(Number) },
    ]);
    expect(b2.segments[1]!.upTo).toBeGreaterThanOrEqual(4);
    expect(b2.entries).toEqual(["e-b1-e1", "e-b1-e2", "e-b2-e3", "e-b2-e4"]);
    expect(b2.messages).toEqual(["e-b1-e1:user", "e-b1-e2:assistant", "e-b2-e3:user", "e-b2-e4:assistant"]);
    expect(b2.last).toEqual(["e-b1-e2", "e-b2-e4"]);
    expect((await walk("e-b2", 3)).entries).toEqual(["e-b1-e1", "e-b1-e2", "e-b2-e3"]);
    expect((await walk("e-b1", 1)).entries).toEqual(["e-b1-e1"]);
    expect((await walk("e-b3")).entries).toEqual([]);
    const lastTwo = await store().read((tx) => tx.lastSegmentMessages({ branchId: "e-b1", after: 0, upTo: 4 }, 2));
    expect(lastTwo.map((m) => m.id)).toEqual(["e-b1-e3", "e-b1-e4"]);
  });

  it("finds a message's versions: the messages after the same anchor", async () => {
    const versions = await store().read((tx) => tx.versionsAfter("e", "e-b1-e2"));
    expect(versions.map((m) => m.id).sort()).toEqual(["e-b1-e3", "e-b2-e3"]);
    const rows = await store().read((tx) => tx.messageVersions("e", [{ ofId: "e-b2-e3", anchorId: "e-b1-e2" }]));
    expect(rows.map((r) => r.id).sort()).toEqual(["e-b1-e3", "e-b2-e3"]);
    expect(rows.every((r) => r.ofId === "e-b2-e3")).toBe(true);
  });

  it("journals tool calls: running until a result is written, then read with it", async () => {
    await seed(store(), "tool", "tom", 1);
    const call = (position: number, callId: string, reversible: boolean | null) =>
      entry("tool-b1", position, { kind: "tool", role: null, tool: "write", callId, content: '{"p":1}', reversible });
    await store().write({ sessionId: "tool" }, function* (tx) {
      yield* tx.insertEntry(call(2, "c2", true));
      yield* tx.insertEntry(call(3, "c3", false));
    });
    const running = (await store().read((tx) => tx.runningTools())).map((t) => t.id);
    expect(running).toEqual(expect.arrayContaining(["tool-b1-e2", "tool-b1-e3"]));
    await store().write({ sessionId: "tool" }, (tx) =>
      tx.insertToolResult({
        entryId: "tool-b1-e2",
        status: "succeeded",
        result: '{"ok":true}',
        error: null,
        hash: hex("r"),
        completedAt: at(30),
      }),
    );
    const got = await store().read(function* (tx) {
      return {
        done: yield* tx.getTool("tool-b1-e2"),
        open: yield* tx.getTool("tool-b1-e3"),
        notATool: yield* tx.getTool("tool-b1-e1"),
        running: (yield* tx.runningTools()).map((t) => t.id),
        segment: (yield* tx.segmentTools({ branchId: "tool-b1", after: 0, upTo: 3 })).map((t) => t.id),
      };
    });
    expect(got.done).toMatchObject({ tool: "write", callId: "c2", reversible: true, status: "succeeded", result: '{"ok":true}' });
    expect(got.done).toMatchObject({ resultHash: hex("r"), completedAt: at(30), appliedResult: null, appliedSeq: null });
    expect(got.open).toMatchObject({ reversible: false, status: null, result: null, completedAt: null });
    expect(got.notATool).toBeUndefined();
    expect(got.running).toContain("tool-b1-e3");
    expect(got.running).not.toContain("tool-b1-e2");
    expect(got.segment).toEqual(["tool-b1-e2", "tool-b1-e3"]);
  });

  it("lists a segment's succeeded calls that are neither applied nor imported, in position order", async () => {
    await seed(store(), "un", "una", 1);
    const call = (branchId: string, position: number) =>
      entry(branchId, position, { kind: "tool", role: null, tool: "write", callId: `c${position}`, content: "{}", reversible: true });
    const result = (entryId: string, status: "succeeded" | "failed") => ({
      entryId,
      status,
      result: status === "succeeded" ? "{}" : null,
      error: status === "failed" ? "no" : null,
      hash: hex(entryId),
      completedAt: at(30),
    });
    await store().write({ sessionId: "un" }, function* (tx) {
      // Inserted out of position order: the answer follows positions, not insertion.
      for (const p of [7, 2, 3, 4, 5, 6]) yield* tx.insertEntry(call("un-b1", p));
      yield* tx.insertEntry(entry("un-b1", 8));
      for (const p of [7, 2, 5, 6]) yield* tx.insertToolResult(result(`un-b1-e${p}`, "succeeded"));
      yield* tx.insertToolResult(result("un-b1-e3", "failed"));
      // e4 runs still; e5 is applied; e6 came with an imported document.
      yield* tx.markApplied("un-b1-e5", "un", "{}", at(31));
      yield* tx.insertImportedCall("un-b1-e6", "un");
      // A branch forked at 1 with a succeeded call of its own: not the root branch's.
      yield* tx.insertBranch(
        rootBranch("un", { id: "un-b2", parentId: "un-b1", forkPosition: 1, forkEntryId: "un-b1-e1", reason: "edit" }),
      );
      yield* tx.insertEntry(call("un-b2", 2));
      yield* tx.insertToolResult(result("un-b2-e2", "succeeded"));
    });
    const unapplied = (branchId: string, after: number, upTo: number) => store().read((tx) => tx.unappliedTools({ branchId, after, upTo }));
    expect(await unapplied("un-b1", 0, 8)).toEqual(["un-b1-e2", "un-b1-e7"]);
    expect(await unapplied("un-b1", 2, 8)).toEqual(["un-b1-e7"]);
    expect(await unapplied("un-b1", 0, 6)).toEqual(["un-b1-e2"]);
    expect(await unapplied("un-b1", 1, 2)).toEqual(["un-b1-e2"]);
    expect(await unapplied("un-b1", 2, 2)).toEqual([]);
    expect(await unapplied("un-b1", 7, 2)).toEqual([]);
    expect(await unapplied("un-b2", 1, 2)).toEqual(["un-b2-e2"]);
    expect(await unapplied("nope", 0, 8)).toEqual([]);
    // Undone, a call is unapplied again; applied, it is not.
    await store().write({ sessionId: "un" }, function* (tx) {
      yield* tx.unmarkApplied("un-b1-e5");
      yield* tx.markApplied("un-b1-e2", "un", null, at(32));
    });
    expect(await unapplied("un-b1", 0, 8)).toEqual(["un-b1-e5", "un-b1-e7"]);
  });

  it("stores a state snapshot once per hash, and prunes those nothing points at", async () => {
    const [a, again, b] = await store().write({ sessionId: "e" }, function* (tx) {
      return [
        yield* tx.putSnapshot(hex("a"), '{"a":1}'),
        yield* tx.putSnapshot(hex("a"), '{"a":1}'),
        yield* tx.putSnapshot(hex("b"), '{"b":2}', 3),
      ];
    });
    expect(again).toBe(a);
    expect(b).not.toBe(a);
    expect(await store().query((tx) => tx.getSnapshot(b!))).toEqual({ hash: hex("b"), body: '{"b":2}', version: 3 });
    expect((await store().query((tx) => tx.getSnapshot(a!)))?.version).toBe(1);
    const many = await store().write({ sessionId: "e" }, (tx) =>
      tx.putSnapshots([
        { hash: hex("a"), body: '{"a":1}', version: 1 },
        { hash: hex("c"), body: '{"c":3}', version: 1 },
      ]),
    );
    expect(many.get(hex("a"))).toBe(a);
    await store().write({ sessionId: "e" }, (tx) =>
      tx.insertEntry(entry("e-b3", 1, { kind: "state", role: null, content: null, stateId: a! })),
    );
    const deleted = await store().write({ global: true }, (tx) => tx.deleteUnreferencedSnapshots());
    expect(deleted).toBeGreaterThanOrEqual(2);
    expect(await store().query((tx) => tx.getSnapshot(a!))).toBeDefined();
    expect(await store().query((tx) => tx.getSnapshot(b!))).toBeUndefined();
  });
}
