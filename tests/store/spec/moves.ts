// Spec: who runs a call or a move (processes, or leases on shared stores), the move journal fenced by its owner, the
// applied world, and the undo/redo stack.
import { expect, it } from "vitest";
import type { NewMove, Owner, Store } from "../../../src/store/port/index.js";
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
    expect((await store().read((tx) => tx.activity("mv"))).moves).toEqual([{ id: "mv1", ...first }]);
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
}
