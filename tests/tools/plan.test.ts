// plan(): a dry run whose undone/replayed/skipped/unknown are exactly what the following move does.
import { afterEach, describe, expect, it } from "vitest";
import type { MovePlan, MoveResult } from "../../src/index.js";
import { readLog, readOrNull } from "../fixtures/file-tools.js";
import { ids, openWorld, type World } from "../fixtures/harness.js";
import { dumpOf } from "../fixtures/backend.js";

let w: World;
afterEach(async () => {
  await w?.close();
});

function sameSteps(plan: MovePlan, moved: MoveResult): void {
  expect(ids(moved.undone)).toEqual(ids(plan.undone));
  expect(ids(moved.replayed)).toEqual(ids(plan.replayed));
  expect(ids(moved.skipped)).toEqual(ids(plan.skipped));
  expect(ids(moved.unknown)).toEqual(ids(plan.unknown));
  expect(moved.failed).toEqual([]);
  expect(plan.failed).toEqual([]);
}

describe("plan", () => {
  it("matches rollback, switchBranch and edit, step for step, and changes nothing itself", async () => {
    w = await openWorld();
    const a = w.file("a");
    const b = w.file("b");
    const c = w.file("c");
    const log = w.file("log");
    const cp0 = await w.s.checkpoint({ name: "start" });
    const [m1] = await w.s.append({ role: "user", content: "go" });
    await w.s.invoke("write_file", { path: a, text: "A" });
    await w.s.invoke("send_email", { to: "bob@example.com", subject: "s" });
    await w.s.invoke("explode", { path: w.file("x") }).catch(() => undefined);
    const mid = await w.s.checkpoint({ name: "mid" });
    const [m2] = await w.s.append({ role: "user", content: "more" });
    await w.s.invoke("append_line", { path: log, line: "one" });
    await w.s.invoke("write_file", { path: b, text: "B" });
    const root = (await w.s.info()).currentBranchId;

    // rollback to the start
    const before = await dumpOf(w.dbPath);
    const p1 = await w.s.plan({ checkpointId: cp0.id });
    expect(await dumpOf(w.dbPath)).toEqual(before);
    expect(w.calls.filter((x) => x.op === "undo")).toEqual([]);
    expect(p1.undone.length).toBe(3);
    expect(p1.skipped.length).toBe(1);
    expect(p1.branch).toMatchObject({ id: null, parentId: root, forkPosition: cp0.position, position: cp0.position });
    expect(p1.leftBehind.map((e) => e.kind)).toEqual(["message", "tool", "tool", "tool", "message", "tool", "tool"]);
    const r1 = await w.s.rollback(cp0.id);
    sameSteps(p1, r1);

    // work on the new branch, then plan and switch back to root
    await w.s.invoke("write_file", { path: c, text: "C" });
    await w.s.invoke("append_line", { path: log, line: "other" });
    const p2 = await w.s.plan({ branchId: root });
    expect(p2.branch).toMatchObject({ id: root });
    expect(p2.undone.length).toBe(2);
    expect(p2.replayed.length).toBe(3);
    const r2 = await w.s.switchBranch(root);
    sameSteps(p2, r2);
    expect([readOrNull(a), readOrNull(b), readOrNull(c), readOrNull(log)]).toEqual(["A", "B", null, "one\n"]);

    // edit the second message: back to `mid`
    const p3 = await w.s.plan({ messageId: m2!.id });
    expect(p3.branch).toMatchObject({ id: null, parentId: root, position: mid.position });
    const r3 = await w.s.edit(m2!.id, { role: "user", content: "less" });
    sameSteps(p3, r3);
    expect([readOrNull(a), readOrNull(b), readOrNull(log)]).toEqual(["A", null, ""]);

    // rollback to a checkpoint in the middle, from the edit branch
    const p4 = await w.s.plan({ checkpointId: mid.id });
    const r4 = await w.s.rollback(mid.id);
    sameSteps(p4, r4);

    // edit of the first message from there
    const p5 = await w.s.plan({ messageId: m1!.id });
    const r5 = await w.s.edit(m1!.id, { role: "user", content: "stop" });
    sameSteps(p5, r5);
    expect([readOrNull(a), readOrNull(b), readOrNull(c)]).toEqual([null, null, null]);
    expect(readLog(w.outbox)).toHaveLength(1);
  });

  it("a plan to where the world already is does nothing", async () => {
    w = await openWorld();
    await w.s.invoke("write_file", { path: w.file("a"), text: "A" });
    const here = await w.s.checkpoint();
    const root = (await w.s.info()).currentBranchId;
    const p = await w.s.plan({ checkpointId: here.id });
    expect([p.undone, p.replayed, p.skipped, p.unknown, p.leftBehind]).toEqual([[], [], [], [], []]);
    const q = await w.s.plan({ branchId: root });
    expect([q.undone, q.replayed, q.skipped, q.unknown]).toEqual([[], [], [], []]);
    const moved = await w.s.rollback(here.id);
    sameSteps(p, moved);
    expect(readOrNull(w.file("a"))).toBe("A");
  });
});
