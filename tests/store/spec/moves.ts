// Spec: who runs a call or a move (processes, or leases on shared stores), the move journal fenced by its owner, the
// applied world, and the undo/redo stack.
import { expect, it } from "vitest";
import type { MoveStepStatus, NewMove, Owner, Store } from "../../../src/store/port/index.js";
import { at, checkpoint, entry, rootBranch, seed } from "./fixture.js";

const first: Owner = { pid: 100, pidStart: "boot-a" };
const second: Owner = { pid: 200, pidStart: null };
const third: Owner = { pid: 300, pidStart: "boot-c" };

/** A lease's length where the store keeps leases (null where owners are processes), as the engine passes it. */
const leaseOf = (store: Store, ms: number) => (store.capabilities.ownership === "lease" ? ms : null);

const tool = (branchId: string, position: number) =>
  entry(branchId, position, { kind: "tool", role: null, tool: "write", callId: `call-${position}`, content: "{}", reversible: true });

const move = (id: string, sessionId: string, owner: Owner, over: Partial<NewMove> = {}): NewMove => ({
  id,
  sessionId,
  kind: "rollback",
  spec: "{}",
  status: "running",
  ...owner,
  createdAt: at(60),
  finishedAt: null,
  ...over,
});

export function callsSpec(store: () => Store): void {
  it("records a running call's owner, reads it with the session's activity, and forgets it", async () => {
    await seed(store(), "ca", "alice", 1);
    const lease = leaseOf(store(), 60_000);
    await store().write({ sessionId: "ca" }, function* (tx) {
      yield* tx.insertEntry(tool("ca-b1", 2));
      yield* tx.insertCallOwner("ca-b1-e2", "ca", first, lease);
    });
    const owners = await store().read((tx) => tx.callOwners("ca"));
    expect(owners).toEqual([{ entryId: "ca-b1-e2", sessionId: "ca", tool: "write", ...first, leaseHeld: lease === null ? null : true }]);
    expect((await store().read((tx) => tx.callOwners())).map((o) => o.entryId)).toContain("ca-b1-e2");
    const activity = await store().read((tx) => tx.activity("ca"));
    expect(activity.moves).toEqual([]);
    expect(activity.calls.map((c) => c.entryId)).toEqual(["ca-b1-e2"]);
    expect(await store().write({ sessionId: "ca" }, (tx) => tx.renewCall("ca-b1-e2", first, 60_000))).toBe(true);
    expect(await store().write({ sessionId: "ca" }, (tx) => tx.renewCall("ca-b1-e2", second, 60_000))).toBe(false);
    await store().write({ sessionId: "ca" }, (tx) => tx.deleteCallOwner("ca-b1-e2"));
    expect(await store().read((tx) => tx.callOwners("ca"))).toEqual([]);
    expect(await store().write({ sessionId: "ca" }, (tx) => tx.renewCall("ca-b1-e2", first, 60_000))).toBe(false);
  });

  it("records the paths a call changed (none is a record too), replaces them, and lists the calls that changed any", async () => {
    await seed(store(), "cp", "alice", 1);
    await store().write({ sessionId: "cp" }, function* (tx) {
      for (const position of [2, 3, 4]) yield* tx.insertEntry(tool("cp-b1", position));
      yield* tx.putCallPaths("cp-b1-e2", "cp", ["src/b.ts", "a.txt"]);
      yield* tx.putCallPaths("cp-b1-e3", "cp", []);
    });
    const read = () =>
      store().read(function* (tx) {
        return {
          e2: yield* tx.callPaths("cp-b1-e2"),
          e3: yield* tx.callPaths("cp-b1-e3"),
          e4: yield* tx.callPaths("cp-b1-e4"),
          changing: (yield* tx.pathChangingCalls("cp")).map((c) => [c.id, c.branchId, c.position]),
          pathless: (yield* tx.pathlessCalls("cp")).map((c) => `${c.id}:${c.tool}`),
        };
      });
    expect(await read()).toEqual({
      e2: ["a.txt", "src/b.ts"],
      e3: [],
      e4: undefined,
      changing: [["cp-b1-e2", "cp-b1", 2]],
      pathless: ["cp-b1-e3:write"],
    });
    await store().write({ sessionId: "cp" }, function* (tx) {
      yield* tx.putCallPaths("cp-b1-e2", "cp", []);
      yield* tx.putCallPaths("cp-b1-e4", "cp", ["é/ü"]);
    });
    expect(await read()).toEqual({
      e2: [],
      e3: [],
      e4: ["é/ü"],
      changing: [["cp-b1-e4", "cp-b1", 4]],
      pathless: ["cp-b1-e2:write", "cp-b1-e3:write"],
    });
    expect(await store().read((tx) => tx.pathChangingCalls("nope"))).toEqual([]);
    expect(await store().read((tx) => tx.pathlessCalls("nope"))).toEqual([]);
  });

  it("records which of a call's paths held a hand edit as it began, with what it found and left there", async () => {
    await seed(store(), "ch", "alice", 1);
    await store().write({ sessionId: "ch" }, function* (tx) {
      for (const position of [2, 3]) yield* tx.insertEntry(tool("ch-b1", position));
      yield* tx.putCallPaths("ch-b1-e2", "ch", ["c", "b", "a"], {
        handEdited: ["c", "b"],
        handEditIds: new Map([
          ["c", { found: null, left: "h2+x" }],
          ["b", { found: "h1", left: null }],
        ]),
      });
    });
    const read = () =>
      store().read(function* (tx) {
        return {
          paths: yield* tx.callPaths("ch-b1-e2"),
          hand: yield* tx.callHandEdited("ch-b1-e2"),
          ids: Object.fromEntries(yield* tx.callHandEditIds("ch-b1-e2")),
          none: yield* tx.callHandEdited("ch-b1-e3"),
          noIds: (yield* tx.callHandEditIds("ch-b1-e3")).size,
          changing: (yield* tx.pathChangingCalls("ch")).map((c) => c.id),
        };
      });
    expect(await read()).toEqual({
      paths: ["a", "b", "c"],
      hand: ["b", "c"],
      ids: { b: { found: "h1", left: null }, c: { found: null, left: "h2+x" } },
      none: [],
      noIds: 0,
      changing: ["ch-b1-e2"],
    });
    await store().write({ sessionId: "ch" }, (tx) => tx.putCallPaths("ch-b1-e2", "ch", ["a"]));
    expect(await read()).toEqual({ paths: ["a"], hand: [], ids: {}, none: [], noIds: 0, changing: ["ch-b1-e2"] });
  });

  it("records what a call left in its paths with them (none given: not recorded), and replaces it", async () => {
    await seed(store(), "co", "alice", 1);
    await store().write({ sessionId: "co" }, function* (tx) {
      for (const position of [2, 3, 4]) yield* tx.insertEntry(tool("co-b1", position));
      yield* tx.putCallPaths("co-b1-e2", "co", ["b", "a"], {
        outputs: new Map([
          ["b", "h1+x"],
          ["a", null],
        ]),
      });
      yield* tx.putCallPaths("co-b1-e3", "co", ["a"]);
    });
    const read = () =>
      store().read(function* (tx) {
        const out = [];
        for (const id of ["co-b1-e2", "co-b1-e3", "co-b1-e4"]) {
          const outputs = yield* tx.callOutputs(id);
          out.push(outputs && Object.fromEntries(outputs));
        }
        return [...out, yield* tx.callPaths("co-b1-e2"), (yield* tx.pathChangingCalls("co")).length];
      });
    expect(await read()).toEqual([{ a: null, b: "h1+x" }, undefined, undefined, ["a", "b"], 2]);
    await store().write({ sessionId: "co" }, (tx) => tx.putCallPaths("co-b1-e2", "co", ["a"]));
    expect(await read()).toEqual([undefined, undefined, undefined, ["a"], 2]);
  });

  it("records what the files held where a recorded call's arguments name with its completion (none: not recorded)", async () => {
    await seed(store(), "nf", "alice", 1);
    await store().write({ sessionId: "nf" }, function* (tx) {
      for (const position of [2, 3]) {
        yield* tx.insertEntry(tool("nf-b1", position));
        const done = { status: "succeeded", result: "null", error: null, hash: "h", completedAt: at(position) } as const;
        yield* tx.insertToolResult({ entryId: `nf-b1-e${position}`, ...done });
      }
      yield* tx.putRecordedFiles(
        "nf-b1-e2",
        new Map([
          ["b", "h1"],
          ["a", null],
        ]),
      );
    });
    const read = () =>
      store().read(function* (tx) {
        const out = [];
        for (const id of ["nf-b1-e2", "nf-b1-e3", "nope"]) {
          const files = yield* tx.recordedFiles(id);
          out.push(files && Object.fromEntries(files));
        }
        return [...out, yield* tx.callPaths("nf-b1-e2")];
      });
    expect(await read()).toEqual([{ a: null, b: "h1" }, undefined, undefined, undefined]);
    await store().write({ sessionId: "nf" }, (tx) => tx.putRecordedFiles("nf-b1-e2", new Map()));
    expect(await read()).toEqual([undefined, undefined, undefined, undefined]);
  });
}

export function movesSpec(store: () => Store): void {
  it("journals a running move and its steps, in order, and tells the checkpoint it will fork from", async () => {
    await seed(store(), "mv", "alice", 2);
    await store().write({ sessionId: "mv" }, function* (tx) {
      yield* tx.insertEntry(tool("mv-b1", 3));
      yield* tx.insertEntry(tool("mv-b1", 4));
      yield* tx.insertCheckpoint(checkpoint("mv-cp", "mv", 2), at(40));
      // A lease that runs out at once: anyone may take it over below.
      yield* tx.insertMove(move("mv1", "mv", first, { spec: JSON.stringify({ newBranch: { forkCheckpointId: "mv-cp" } }) }), 0);
      yield* tx.insertMoveSteps([
        { moveId: "mv1", idx: 1, op: "replay", entryId: "mv-b1-e4", status: "pending", result: null, error: null },
        { moveId: "mv1", idx: 0, op: "undo", entryId: "mv-b1-e3", status: "pending", result: null, error: null },
      ]);
      yield* tx.insertMoveSteps([]);
    });
    const running = await store().read((tx) => tx.runningMoves("mv"));
    expect(running).toEqual([expect.objectContaining({ id: "mv1", sessionId: "mv", kind: "rollback", status: "running", ...first })]);
    expect((await store().read((tx) => tx.runningMoves())).map((m) => m.id)).toContain("mv1");
    expect((await store().read((tx) => tx.moveSteps("mv1"))).map((s) => [s.idx, s.op, s.entryId, s.status])).toEqual([
      [0, "undo", "mv-b1-e3", "pending"],
      [1, "replay", "mv-b1-e4", "pending"],
    ]);
    expect(await store().read((tx) => tx.isMovingFrom("mv-cp"))).toBe(true);
    expect(await store().read((tx) => tx.isMovingFrom("nope"))).toBe(false);
    // `leaseHeld` as `runningMoves` tells it (null where owners are processes).
    expect((await store().read((tx) => tx.activity("mv"))).moves).toEqual([{ id: "mv1", ...first, leaseHeld: running[0]!.leaseHeld }]);
  });

  it("says in the read of a session's current state whether a move of it is unfinished, once it has tools or a workspace", async () => {
    await seed(store(), "mo", "alice", 1);
    const moving = async () => (await store().read((tx) => tx.currentOf("mo")))!.session.moving;
    expect(await moving()).toBe(false);
    // A session with neither journals no move: not looked for.
    await store().write({ sessionId: "mo" }, (tx) => tx.insertMove(move("mo1", "mo", first), null));
    expect(await moving()).toBe(false);
    await store().write({ sessionId: "mo" }, function* (tx) {
      const manifestId = yield* tx.putManifest("ab".repeat(32), "{}", null);
      yield* tx.putWorkspace({
        sessionId: "mo",
        dir: "/work/mo",
        exclude: "[]",
        gitignore: false,
        manifestId,
        updatedAt: at(61),
        host: "h1",
      });
    });
    expect(await moving()).toBe(true);
    await store().write({ sessionId: "mo" }, (tx) => tx.finishMove("mo1", "failed", at(62)));
    expect(await moving()).toBe(false);
    await store().write({ sessionId: "mo" }, function* (tx) {
      yield* tx.markHasTools("mo");
      yield* tx.insertMove(move("mo2", "mo", first), null);
    });
    expect(await moving()).toBe(true);
    await store().write({ sessionId: "mo" }, (tx) => tx.finishMove("mo2", "done", at(63)));
    expect(await moving()).toBe(false);
  });

  it("fences the journal by owner: a take-over wins once, and the old owner then writes nothing", async () => {
    const lease = leaseOf(store(), 60_000);
    const write = <T>(body: Parameters<Store["write"]>[1]) => store().write({ sessionId: "mv" }, body) as Promise<T>;
    expect(await write((tx) => tx.setMoveStep(first, "mv1", 0, "running", null, null, null))).toBe(true);
    expect(await write((tx) => tx.claimMove("mv1", { pid: 100, pidStart: null }, third, lease))).toBe(false);
    expect(await write((tx) => tx.claimMove("mv1", first, third, lease))).toBe(true);
    expect(await write((tx) => tx.claimMove("mv1", first, second, lease))).toBe(false);
    expect(await write((tx) => tx.setMoveStep(first, "mv1", 0, "done", '"old"', null, lease))).toBe(false);
    expect(await write((tx) => tx.renewMove("mv1", first, 60_000))).toBe(false);
    expect(await write((tx) => tx.renewMove("mv1", third, 60_000))).toBe(true);
    expect(await write((tx) => tx.setMoveStep(third, "mv1", 0, "unknown", null, "crashed", lease))).toBe(true);
    const steps = await store().read((tx) => tx.moveSteps("mv1"));
    expect(steps[0]).toMatchObject({ status: "unknown", result: null, error: "crashed" });
    expect((await store().read((tx) => tx.runningMoves("mv")))[0]).toMatchObject(third);
    expect(await store().read((tx) => tx.uncertainInvocations("mv"))).toEqual(["mv-b1-e3"]);
  });

  it("tells the result of a call's newest replay a move journaled as done", async () => {
    await seed(store(), "lr", "alice", 2);
    const step = (moveId: string, idx: number, op: "undo" | "replay", status: MoveStepStatus, result: string | null) => ({
      moveId,
      idx,
      op,
      entryId: "lr-b1-e3",
      status,
      result,
      error: null,
    });
    const last = () => store().read((tx) => tx.lastReplay("lr", "lr-b1-e3"));
    await store().write({ sessionId: "lr" }, function* (tx) {
      yield* tx.insertEntry(tool("lr-b1", 3));
      yield* tx.insertMove(move("lr1", "lr", first), null);
      yield* tx.insertMoveSteps([step("lr1", 0, "undo", "done", null), step("lr1", 1, "replay", "done", '{"n":1}')]);
      yield* tx.finishMove("lr1", "done", at(70));
    });
    expect(await last()).toEqual({ result: '{"n":1}' });
    await store().write({ sessionId: "lr" }, function* (tx) {
      yield* tx.insertMove(move("lr2", "lr", first), null);
      yield* tx.insertMoveSteps([step("lr2", 0, "undo", "done", null), step("lr2", 1, "replay", "done", null)]);
      yield* tx.insertMove(move("lr3", "lr", first), null);
      yield* tx.insertMoveSteps([step("lr3", 0, "undo", "done", null), step("lr3", 1, "replay", "failed", null)]);
    });
    expect(await last()).toEqual({ result: null });
    expect(await store().read((tx) => tx.lastReplay("lr", "lr-b1-e1"))).toBeUndefined();
    expect(await store().read((tx) => tx.lastReplay("mv", "lr-b1-e3"))).toBeUndefined();
    await store().write({ sessionId: "lr" }, function* (tx) {
      yield* tx.finishMove("lr2", "done", at(71));
      yield* tx.finishMove("lr3", "failed", at(72));
      yield* tx.deleteFinishedMoves("lr");
    });
    expect(await last()).toBeUndefined();
  });

  it("keeps a replay's result past the deletion of its move, newest kept first, then the journal's", async () => {
    await seed(store(), "kr", "alice", 2);
    const last = (sessionId = "kr") => store().read((tx) => tx.lastReplay(sessionId, "kr-b1-e3"));
    await store().write({ sessionId: "kr" }, function* (tx) {
      yield* tx.insertEntry(tool("kr-b1", 3));
      yield* tx.insertMove(move("kr1", "kr", first), null);
      yield* tx.insertMoveSteps([
        { moveId: "kr1", idx: 0, op: "replay", entryId: "kr-b1-e3", status: "done", result: '"journal"', error: null },
      ]);
      yield* tx.finishMove("kr1", "done", at(80));
    });
    // Recorded before results were kept: the journal's.
    expect(await last()).toEqual({ result: '"journal"' });
    await store().write({ sessionId: "kr" }, (tx) => tx.keepReplayResult("kr-b1-e3", "kr", '{"n":1}', at(81)));
    expect(await last()).toEqual({ result: '{"n":1}' });
    await store().write({ sessionId: "kr" }, (tx) => tx.keepReplayResult("kr-b1-e3", "kr", null, at(82)));
    expect(await last()).toEqual({ result: null });
    await store().write({ sessionId: "kr" }, (tx) => tx.keepReplayResult("kr-b1-e3", "kr", '{"n":2}', at(83)));
    expect(await store().write({ sessionId: "kr" }, (tx) => tx.deleteFinishedMoves("kr"))).toBe(1);
    expect(await last()).toEqual({ result: '{"n":2}' });
    expect(await last("mv")).toBeUndefined();
    expect(await store().read((tx) => tx.lastReplay("kr", "kr-b1-e1"))).toBeUndefined();
  });

  it("keeps a replay's result per application: read by its applied_seq, listed while it is the current one", async () => {
    await seed(store(), "ka", "alice", 2);
    const id = "ka-b1-e3";
    await store().write({ sessionId: "ka" }, function* (tx) {
      yield* tx.insertEntry(tool("ka-b1", 3));
      // Kept while not applied: unnamed (as a replay kept before applications were named).
      yield* tx.keepReplayResult(id, "ka", '"unnamed"', at(90));
      yield* tx.markApplied(id, "ka", '"first"', at(91));
    });
    const seqOf = () =>
      store().read(function* (tx) {
        return (yield* tx.getTool(id))!.appliedSeq!;
      });
    const firstRun = await seqOf();
    // A first run has no result kept: it is not listed.
    expect(await store().read((tx) => tx.replayedApplications("ka"))).toEqual([]);
    await store().write({ sessionId: "ka" }, function* (tx) {
      yield* tx.markApplied(id, "ka", '"r1"', at(92));
      yield* tx.keepReplayResult(id, "ka", '"r1"', at(92));
    });
    const r1 = await seqOf();
    expect(r1).toBeGreaterThan(firstRun);
    expect(await store().read((tx) => tx.replayedApplications("ka"))).toEqual([{ entryId: id, appliedSeq: r1 }]);
    await store().write({ sessionId: "ka" }, function* (tx) {
      yield* tx.markApplied(id, "ka", '"r2"', at(93));
      yield* tx.keepReplayResult(id, "ka", '"r0"', at(93));
      // The same application again: replaces what was kept for it.
      yield* tx.keepReplayResult(id, "ka", '"r2"', at(94));
    });
    const r2 = await seqOf();
    const read = (seq: number | null) => store().read((tx) => tx.replayResult(id, seq));
    expect(await read(r1)).toEqual({ result: '"r1"' });
    expect(await read(r2)).toEqual({ result: '"r2"' });
    expect(await read(null)).toEqual({ result: '"unnamed"' });
    expect(await read(firstRun)).toBeUndefined();
    expect(await store().read((tx) => tx.lastReplay("ka", id))).toEqual({ result: '"r2"' });
    expect(await store().read((tx) => tx.replayedApplications("ka"))).toEqual([{ entryId: id, appliedSeq: r2 }]);
    // Applied again by a first run's result: no longer listed; the replays stay kept.
    await store().write({ sessionId: "ka" }, (tx) => tx.markApplied(id, "ka", '"first"', at(95)));
    expect(await store().read((tx) => tx.replayedApplications("ka"))).toEqual([]);
    expect(await read(r1)).toEqual({ result: '"r1"' });
    expect(await store().read((tx) => tx.replayedApplications("mv"))).toEqual([]);
  });

  it("on lease stores, refuses to take over a move whose lease holds", async () => {
    if (store().capabilities.ownership !== "lease") return;
    await store().write({ sessionId: "mv" }, (tx) => tx.insertMove(move("mv-held", "mv", first), 60_000));
    expect((await store().read((tx) => tx.runningMoves("mv"))).find((m) => m.id === "mv-held")?.leaseHeld).toBe(true);
    expect(await store().write({ sessionId: "mv" }, (tx) => tx.claimMove("mv-held", first, second, 60_000))).toBe(false);
    await store().write({ sessionId: "mv" }, (tx) => tx.finishMove("mv-held", "failed", at(61)));
  });

  it("finishes moves, and deletes finished ones except those with a step of unknown outcome", async () => {
    await store().write({ sessionId: "mv" }, function* (tx) {
      yield* tx.insertMove(move("mv2", "mv", second), null);
      yield* tx.insertMoveSteps([{ moveId: "mv2", idx: 0, op: "undo", entryId: "mv-b1-e4", status: "done", result: '"r"', error: null }]);
      yield* tx.finishMove("mv1", "done", at(62));
      yield* tx.finishMove("mv2", "failed", at(63));
    });
    expect(await store().read((tx) => tx.runningMoves("mv"))).toEqual([]);
    expect(await store().read((tx) => tx.isMovingFrom("mv-cp"))).toBe(false);
    expect(await store().write({ sessionId: "mv" }, (tx) => tx.deleteFinishedMoves("mv"))).toBeGreaterThanOrEqual(1);
    expect(await store().read((tx) => tx.moveSteps("mv2"))).toEqual([]);
    expect((await store().read((tx) => tx.moveSteps("mv1"))).map((s) => s.idx)).toEqual([0, 1]);
  });

  it("finds a call's steps a crash interrupted, and records their outcome only while it is unknown", async () => {
    await seed(store(), "uk", "alice", 1);
    await seed(store(), "uk2", "alice", 1);
    const step = (moveId: string, idx: number, entryId: string, status: MoveStepStatus, op: "undo" | "replay" = "undo") => ({
      moveId,
      idx,
      op,
      entryId,
      status,
      result: status === "done" ? '"r"' : null,
      error: status === "unknown" ? "crashed" : null,
    });
    await store().write({ sessionIds: ["uk", "uk2"] }, function* (tx) {
      yield* tx.insertEntry(tool("uk-b1", 2));
      yield* tx.insertEntry(tool("uk-b1", 3));
      yield* tx.insertEntry(tool("uk2-b1", 2));
      yield* tx.insertMove(move("uk-m1", "uk", first), null);
      yield* tx.insertMove(move("uk-m2", "uk", second, { status: "failed", finishedAt: at(61) }), null);
      yield* tx.insertMove(move("uk2-m1", "uk2", second, { status: "failed", finishedAt: at(61) }), null);
      yield* tx.insertMoveSteps([
        step("uk-m1", 0, "uk-b1-e2", "unknown"),
        step("uk-m1", 1, "uk-b1-e3", "unknown", "replay"),
        step("uk-m1", 2, "uk-b1-e2", "pending", "replay"),
        step("uk-m2", 0, "uk-b1-e2", "unknown"),
        step("uk-m2", 1, "uk-b1-e2", "done"),
        step("uk2-m1", 0, "uk2-b1-e2", "unknown"),
      ]);
    });
    const unknown = async (sessionId: string, entryId: string) =>
      (await store().read((tx) => tx.unknownSteps(sessionId, entryId))).sort((a, b) => a.moveId.localeCompare(b.moveId) || a.idx - b.idx);
    expect(await unknown("uk", "uk-b1-e2")).toEqual([step("uk-m1", 0, "uk-b1-e2", "unknown"), step("uk-m2", 0, "uk-b1-e2", "unknown")]);
    expect(await unknown("uk", "uk-b1-e3")).toEqual([step("uk-m1", 1, "uk-b1-e3", "unknown", "replay")]);
    expect(await unknown("uk", "uk-b1-e1")).toEqual([]);
    // Another session's move is not this session's, even naming the same call.
    expect(await unknown("uk", "uk2-b1-e2")).toEqual([]);
    expect(await unknown("uk2", "uk2-b1-e2")).toHaveLength(1);

    // The move has ended: no owner fences the outcome. A step that is not unknown (any more) keeps what it has.
    await store().write({ sessionId: "uk" }, function* (tx) {
      yield* tx.finishMove("uk-m1", "failed", at(62));
      yield* tx.resolveUnknownStep("uk-m2", 0, "done", '{"ok":1}', null);
      yield* tx.resolveUnknownStep("uk-m2", 0, "failed", null, "again");
      yield* tx.resolveUnknownStep("uk-m2", 1, "failed", null, "not unknown");
      yield* tx.resolveUnknownStep("uk-m1", 2, "done", '"no"', null);
      yield* tx.resolveUnknownStep("uk-m1", 1, "failed", null, "lost");
      yield* tx.resolveUnknownStep("nope", 0, "done", null, null);
    });
    const steps = async (moveId: string) =>
      (await store().read((tx) => tx.moveSteps(moveId))).map((s) => [s.idx, s.status, s.result, s.error]);
    expect(await steps("uk-m2")).toEqual([
      [0, "done", '{"ok":1}', null],
      [1, "done", '"r"', null],
    ]);
    expect(await steps("uk-m1")).toEqual([
      [0, "unknown", null, "crashed"],
      [1, "failed", null, "lost"],
      [2, "pending", null, null],
    ]);
    expect(await unknown("uk", "uk-b1-e2")).toEqual([step("uk-m1", 0, "uk-b1-e2", "unknown")]);
    expect(await unknown("uk", "uk-b1-e3")).toEqual([]);
    expect(await store().read((tx) => tx.uncertainInvocations("uk"))).toEqual(["uk-b1-e2"]);
    // Resolved, a finished move may be deleted; one with a step still unknown is kept.
    await store().write({ sessionId: "uk" }, (tx) => tx.deleteFinishedMoves("uk"));
    expect(await steps("uk-m2")).toEqual([]);
    expect(await steps("uk-m1")).toHaveLength(3);
    await store().write({ sessionId: "uk" }, function* (tx) {
      yield* tx.resolveUnknownStep("uk-m1", 0, "done", null, null);
      yield* tx.deleteFinishedMoves("uk");
    });
    expect(await steps("uk-m1")).toEqual([]);
    expect(await store().read((tx) => tx.uncertainInvocations("uk"))).toEqual([]);
    expect(await unknown("uk2", "uk2-b1-e2")).toHaveLength(1);
  });

  it("keeps which calls are applied, newest application first, with their results", async () => {
    await store().write({ sessionId: "mv" }, function* (tx) {
      yield* tx.markApplied("mv-b1-e3", "mv", '{"ok":1}', at(70));
      yield* tx.markApplied("mv-b1-e4", "mv", null, at(71));
    });
    const applied = await store().read((tx) => tx.appliedTools("mv"));
    expect(applied.map((t) => [t.id, t.appliedResult])).toEqual([
      ["mv-b1-e4", null],
      ["mv-b1-e3", '{"ok":1}'],
    ]);
    expect(applied.every((t) => typeof t.appliedSeq === "number")).toBe(true);
    await store().write({ sessionId: "mv" }, (tx) => tx.markApplied("mv-b1-e3", "mv", '{"again":1}', at(72)));
    expect((await store().read((tx) => tx.appliedTools("mv"))).map((t) => [t.id, t.appliedResult])[0]).toEqual(["mv-b1-e3", '{"again":1}']);
    await store().write({ sessionId: "mv" }, (tx) => tx.unmarkApplied("mv-b1-e4"));
    expect((await store().read((tx) => tx.appliedTools("mv"))).map((t) => t.id)).toEqual(["mv-b1-e3"]);
    expect((await store().read((tx) => tx.getTool("mv-b1-e3")))?.appliedResult).toBe('{"again":1}');
    expect(await store().read((tx) => tx.appliedTools("nope"))).toEqual([]);
  });

  it("sets calls aside per session until they are applied again", async () => {
    await seed(store(), "sa", "sam", 2);
    await store().write({ sessionId: "sa" }, function* (tx) {
      yield* tx.insertEntry(tool("sa-b1", 3));
      yield* tx.insertEntry(tool("sa-b1", 4));
      yield* tx.markApplied("sa-b1-e3", "sa", null, at(70));
    });
    expect(await store().read((tx) => tx.setAsideCalls("sa"))).toEqual([]);
    await store().write({ sessionId: "sa" }, function* (tx) {
      yield* tx.unmarkApplied("sa-b1-e3");
      yield* tx.setAside("sa-b1-e3", "sa", "sa-b1", 4, at(71));
      yield* tx.setAside("sa-b1-e4", "sa", "sa-b1", 4, at(71));
      yield* tx.setAside("sa-b1-e4", "sa", "sa-b2", 6, at(72));
    });
    // One row per call and branch: set aside on two branches, a call is out of both.
    expect(await store().read((tx) => tx.setAsideCalls("sa"))).toEqual([
      { id: "sa-b1-e3", branchId: "sa-b1", position: 4 },
      { id: "sa-b1-e4", branchId: "sa-b1", position: 4 },
      { id: "sa-b1-e4", branchId: "sa-b2", position: 6 },
    ]);
    expect(await store().read((tx) => tx.setAsideCalls("other"))).toEqual([]);
    // Set aside again on a branch: that branch's row is replaced.
    await store().write({ sessionId: "sa" }, (tx) => tx.setAside("sa-b1-e4", "sa", "sa-b1", 5, at(72)));
    await store().write({ sessionId: "sa" }, (tx) => tx.markApplied("sa-b1-e3", "sa", '"again"', at(73)));
    expect(await store().read((tx) => tx.setAsideCalls("sa"))).toEqual([
      { id: "sa-b1-e4", branchId: "sa-b1", position: 5 },
      { id: "sa-b1-e4", branchId: "sa-b2", position: 6 },
    ]);
    // Applied on a lineage that goes through one of its branches only: still set aside on the other.
    await store().write({ sessionId: "sa" }, (tx) => tx.markApplied("sa-b1-e4", "sa", null, at(74), ["sa-b1", "sa-b3"]));
    expect(await store().read((tx) => tx.setAsideCalls("sa"))).toEqual([{ id: "sa-b1-e4", branchId: "sa-b2", position: 6 }]);
    await store().write({ sessionId: "sa" }, function* (tx) {
      yield* tx.unmarkApplied("sa-b1-e4");
      yield* tx.markApplied("sa-b1-e4", "sa", null, at(75), ["sa-b1", "sa-b2"]);
    });
    expect(await store().read((tx) => tx.setAsideCalls("sa"))).toEqual([]);
  });

  it("lists the applied calls as where they sit, newest application first", async () => {
    await store().write({ sessionId: "mv" }, (tx) => tx.markApplied("mv-b1-e4", "mv", '"large"', at(73)));
    const calls = await store().read((tx) => tx.appliedCalls("mv"));
    expect(calls).toEqual([
      { id: "mv-b1-e4", branchId: "mv-b1", position: 4 },
      { id: "mv-b1-e3", branchId: "mv-b1", position: 3 },
    ]);
    await store().write({ sessionId: "mv" }, (tx) => tx.unmarkApplied("mv-b1-e4"));
    expect(await store().read((tx) => tx.appliedCalls("mv"))).toEqual([{ id: "mv-b1-e3", branchId: "mv-b1", position: 3 }]);
    expect(await store().read((tx) => tx.appliedCalls("nope"))).toEqual([]);
  });
}

export function moveStackSpec(store: () => Store): void {
  const moved = { kind: "switch", fromBranchId: "st-b1", fromPosition: 2, toBranchId: "st-b1", toPosition: 1 };

  it("stacks moves: those that made no branch in rows of their own, those that did on their branch", async () => {
    await seed(store(), "st", "alice", 2);
    expect(await store().read((tx) => tx.moveToUndo("st"))).toBeUndefined();
    await store().write({ sessionId: "st" }, (tx) => tx.recordMove({ sessionId: "st", ...moved, createdAt: at(80) }));
    const plain = await store().read((tx) => tx.moveToUndo("st"));
    expect(plain).toMatchObject({ sessionId: "st", ...moved, prev: null, createdAt: at(80) });
    expect(plain!.ref).toMatch(/^m:/);
    await store().write({ sessionId: "st" }, function* (tx) {
      const branch = rootBranch("st", {
        id: "st-b2",
        parentId: "st-b1",
        forkPosition: 1,
        forkEntryId: "st-b1-e1",
        reason: "edit",
        createdAt: at(81),
      });
      yield* tx.insertBranch(branch, { kind: "edit", fromBranchId: "st-b1", fromPosition: 1, toPosition: 2 });
      yield* tx.insertEntry(entry("st-b2", 2));
      yield* tx.setCurrentBranch("st", "st-b2", at(81), "st-b2");
    });
    const top = await store().read((tx) => tx.moveToUndo("st"));
    expect(top).toMatchObject({ ref: "st-b2", kind: "edit", fromBranchId: "st-b1", toBranchId: "st-b2", prev: plain!.ref });
    expect(await store().read((tx) => tx.moveToRedo("st"))).toBeUndefined();
    // Down the stack by ref: the row below, and nothing for a ref no move has.
    expect(await store().read((tx) => tx.historyMove(top!.prev!))).toEqual(plain);
    expect(await store().read((tx) => tx.historyMove("st-b2"))).toEqual(top);
    expect(await store().read((tx) => tx.historyMove("m:999999"))).toBeUndefined();
    expect(await store().read((tx) => tx.historyMove("st-b1"))).toBeUndefined();
  });

  it("undoes the top move and redoes the last undone one, refusing any other ref", async () => {
    const set = (ref: string, op: "undo" | "redo") => store().write({ sessionId: "st" }, (tx) => tx.setMoveUndone("st", ref, op));
    const plain = (await store().read((tx) => tx.moveToUndo("st")))!.prev!;
    expect(await set(plain, "undo")).toBe(false);
    expect(await set("st-b2", "undo")).toBe(true);
    expect((await store().read((tx) => tx.moveToUndo("st")))?.ref).toBe(plain);
    expect((await store().read((tx) => tx.moveToRedo("st")))?.ref).toBe("st-b2");
    expect(await set(plain, "undo")).toBe(true);
    expect(await store().read((tx) => tx.moveToUndo("st"))).toBeUndefined();
    expect(await set("st-b2", "redo")).toBe(false);
    expect(await set(plain, "redo")).toBe(true);
    expect((await store().read((tx) => tx.moveToRedo("st")))?.ref).toBe("st-b2");
    // A new move leaves nothing to redo.
    await store().write({ sessionId: "st" }, (tx) => tx.recordMove({ sessionId: "st", ...moved, createdAt: at(82) }));
    expect(await store().read((tx) => tx.moveToRedo("st"))).toBeUndefined();
    expect((await store().read((tx) => tx.moveToUndo("st")))?.prev).toBe(plain);
  });

  it("sets a move's ends with its undo or redo: where the next op on that move goes", async () => {
    await seed(store(), "su", "alice", 2);
    type End = { branchId: string; position: number };
    const set = (ref: string, op: "undo" | "redo", ends?: { from?: End; to?: End }) =>
      store().write({ sessionId: "su" }, (tx) => tx.setMoveUndone("su", ref, op, ends));
    const plainMove = { kind: "switch", fromBranchId: "su-b1", fromPosition: 2, toBranchId: "su-b1", toPosition: 1 };
    await store().write({ sessionId: "su" }, (tx) => tx.recordMove({ sessionId: "su", ...plainMove, createdAt: at(83) }));
    const plain = (await store().read((tx) => tx.moveToUndo("su")))!.ref;
    await store().write({ sessionId: "su" }, function* (tx) {
      const branch = rootBranch("su", {
        id: "su-b2",
        parentId: "su-b1",
        forkPosition: 1,
        forkEntryId: "su-b1-e1",
        reason: "rollback",
        createdAt: at(84),
      });
      yield* tx.insertBranch(branch, { kind: "rollback", fromBranchId: "su-b1", fromPosition: 2, toPosition: 1 });
      yield* tx.setCurrentBranch("su", "su-b2", at(84), "su-b2");
    });
    // A move recorded on its branch: its `to` (then `from`) set, the other end left as it is.
    expect(await set("su-b2", "undo", { to: { branchId: "su-x", position: 5 } })).toBe(true);
    expect(await store().read((tx) => tx.moveToRedo("su"))).toMatchObject({
      ref: "su-b2",
      fromBranchId: "su-b1",
      fromPosition: 2,
      toBranchId: "su-x",
      toPosition: 5,
    });
    expect(await set("su-b2", "redo", { from: { branchId: "su-y", position: 6 } })).toBe(true);
    expect(await store().read((tx) => tx.moveToUndo("su"))).toMatchObject({
      ref: "su-b2",
      fromBranchId: "su-y",
      fromPosition: 6,
      toBranchId: "su-x",
      toPosition: 5,
    });
    // Without ends they stay; a refused op sets none.
    expect(await set("su-b2", "undo")).toBe(true);
    expect(await set(plain, "redo", { from: { branchId: "su-z", position: 9 } })).toBe(false);
    expect(await store().read((tx) => tx.moveToRedo("su"))).toMatchObject({ fromBranchId: "su-y", toBranchId: "su-x" });
    // A move in a row of its own: both ends at once.
    const both = { branchId: "su-p", position: 3 };
    expect(await set(plain, "undo", { from: both, to: both })).toBe(true);
    expect(await store().read((tx) => tx.moveToRedo("su"))).toMatchObject({
      ref: plain,
      fromBranchId: "su-p",
      fromPosition: 3,
      toBranchId: "su-p",
      toPosition: 3,
    });
  });

  it("reads the move stack, and sets it only while it is the stack expected", async () => {
    await seed(store(), "sw", "alice", 2);
    const stack = () => store().read((tx) => tx.moveStack("sw"));
    const swap = (expected: { top: string | null; redo: string[] }, next: { top: string | null; redo: string[] }) =>
      store().write({ sessionId: "sw" }, (tx) => tx.swapMoveStack("sw", expected, next));
    expect(await stack()).toEqual({ top: null, redo: [] });
    const plainMove = { kind: "switch", fromBranchId: "sw-b1", fromPosition: 2, toBranchId: "sw-b1", toPosition: 1 };
    await store().write({ sessionId: "sw" }, (tx) => tx.recordMove({ sessionId: "sw", ...plainMove, createdAt: at(86) }));
    const made = await stack();
    expect(made).toEqual({ top: expect.stringMatching(/^m:/), redo: [] });
    await store().write({ sessionId: "sw" }, (tx) => tx.setMoveUndone("sw", made.top!, "undo"));
    const undone = { top: null, redo: [made.top!] };
    expect(await stack()).toEqual(undone);
    // Not the stack expected: nothing written.
    expect(await swap(made, { top: null, redo: [] })).toBe(false);
    expect(await stack()).toEqual(undone);
    expect(await swap(undone, made)).toBe(true);
    expect(await stack()).toEqual(made);
    expect((await store().read((tx) => tx.moveToUndo("sw")))?.ref).toBe(made.top);
    expect(await store().read((tx) => tx.moveToRedo("sw"))).toBeUndefined();
  });

  it("records the branch that continues a failed block's branch, and where that branch's head was", async () => {
    await seed(store(), "sc", "alice", 2);
    await store().write({ sessionId: "sc" }, function* (tx) {
      const branch = rootBranch("sc", {
        id: "sc-b2",
        parentId: "sc-b1",
        forkPosition: 1,
        forkEntryId: "sc-b1-e1",
        reason: "rollback",
        createdAt: at(85),
      });
      yield* tx.insertBranch(branch);
    });
    expect(await store().read((tx) => tx.branchContinuation("sc-b1"))).toBeUndefined();
    await store().write({ sessionId: "sc" }, (tx) => tx.continueBranch("sc-b1", "sc-b2", 2));
    expect(await store().read((tx) => tx.branchContinuation("sc-b1"))).toEqual({ byBranchId: "sc-b2", atPosition: 2, fromPosition: null });
    expect(await store().read((tx) => tx.branchContinuation("sc-b2"))).toBeUndefined();
    // A branch the block did not run on: where its writes there began is kept too.
    await store().write({ sessionId: "sc" }, (tx) => tx.continueBranch("sc-b1", "sc-b2", 2, 1));
    expect(await store().read((tx) => tx.branchContinuation("sc-b1"))).toEqual({ byBranchId: "sc-b2", atPosition: 2, fromPosition: 1 });
  });
}
