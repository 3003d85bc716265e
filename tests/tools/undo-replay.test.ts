// Moving the world: undo in reverse order of application with the recorded args and result, replay across
// branches oldest first, failed invocations left alone, edit moving the world like rollback and switch.
import * as fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { readOrNull } from "../fixtures/file-tools.js";
import { ids, openWorld, rows, successfulUndos, type World } from "../fixtures/harness.js";

let w: World;
afterEach(async () => {
  await w?.close();
});

describe("undo", () => {
  it("undoes newest first, each undo receiving the recorded args and result", async () => {
    w = await openWorld();
    const a = w.file("a.txt");
    const b = w.file("b.txt");
    const log = w.file("log.txt");
    fs.writeFileSync(a, "original a");
    const cp0 = await w.s.checkpoint({ name: "start" });
    await w.s.invoke("write_file", { path: a, text: "a1" });
    await w.s.invoke("append_line", { path: log, line: "first" });
    await w.s.invoke("write_file", { path: b, text: "b1" });
    await w.s.invoke("write_file", { path: a, text: "a2" });
    await w.s.invoke("append_line", { path: log, line: "second" });
    const track = await w.s.toolTrack();
    w.calls.length = 0;

    const moved = await w.s.rollback(cp0.id);

    expect(ids(moved.undone)).toEqual(ids(track).reverse());
    expect(moved.replayed).toEqual([]);
    expect(moved.skipped).toEqual([]);
    expect(moved.failed).toEqual([]);
    expect(w.calls.map((c) => [c.op, c.invocationId])).toEqual(
      ids(track)
        .reverse()
        .map((id) => ["undo", id]),
    );
    // each undo saw its own args and the result recorded when it ran
    for (const inv of track) {
      const call = w.calls.find((c) => c.invocationId === inv.id)!;
      expect(call.args).toEqual(inv.args);
      expect(call.result).toEqual(inv.result);
      expect(call.replay).toBe(false);
    }
    expect(w.calls.find((c) => c.invocationId === track[3]!.id)!.result).toEqual({ previous: "a1" });
    expect(w.calls.find((c) => c.invocationId === track[0]!.id)!.result).toEqual({ previous: "original a" });
    // the world is back where the checkpoint says
    expect(readOrNull(a)).toBe("original a");
    expect(readOrNull(b)).toBeNull();
    expect(readOrNull(log)).toBe("");
    // the new branch is current, nothing applied any more on the old lineage
    expect((await w.s.info()).currentBranchId).toBe(moved.branch.id);
    expect(moved.branch.forkCheckpointId).toBe(cp0.id);
    const root = track[0]!.branchId;
    expect((await w.s.toolTrack({ branchId: root })).every((t) => !t.applied)).toBe(true);
  });

  it("rolling back to a checkpoint in the middle undoes only what came after it", async () => {
    w = await openWorld();
    const a = w.file("a");
    const b = w.file("b");
    await w.s.invoke("write_file", { path: a, text: "A" });
    const mid = await w.s.checkpoint({ name: "mid" });
    await w.s.invoke("write_file", { path: b, text: "B" });
    await w.s.invoke("write_file", { path: a, text: "A2" });
    const track = await w.s.toolTrack();
    const moved = await w.s.rollback(mid.id);
    expect(ids(moved.undone)).toEqual([track[2]!.id, track[1]!.id]);
    expect(readOrNull(a)).toBe("A");
    expect(readOrNull(b)).toBeNull();
    const after = await w.s.toolTrack();
    expect(ids(after)).toEqual([track[0]!.id]);
    expect(after[0]!.applied).toBe(true);
  });

  it("follows the order of application, not of positions (a replayed call is undone before an older-applied one)", async () => {
    w = await openWorld();
    const a = w.file("a");
    const b = w.file("b");
    const cp0 = await w.s.checkpoint();
    await w.s.invoke("write_file", { path: a, text: "A" }); // position 1
    await w.s.invoke("flaky_write", { path: b, text: "B" }); // position 2
    const root = (await w.s.info()).currentBranchId;
    const [first, second] = await w.s.toolTrack();

    // b's undo fails: a is undone, b stays applied
    w.control.failUndo = true;
    const away = await w.s.rollback(cp0.id, { onUndoError: "continue" });
    expect(ids(away.undone)).toEqual([first!.id]);
    expect(away.failed.map((f) => f.invocation.id)).toEqual([second!.id]);

    // back on root: b, still applied after a's position, cannot be undone first either: only a is replayed, so now a
    // was applied after b
    const back = await w.s.switchBranch(root, { onUndoError: "continue" });
    expect(ids(back.replayed)).toEqual([first!.id]);
    expect(readOrNull(a)).toBe("A");
    expect(readOrNull(b)).toBe("B");
    w.control.failUndo = false;

    w.calls.length = 0;
    const again = await w.s.rollback(cp0.id);
    expect(ids(again.undone)).toEqual([first!.id, second!.id]);
    expect(w.calls.filter((c) => c.op === "undo").map((c) => c.invocationId)).toEqual([first!.id, second!.id]);
    expect(readOrNull(a)).toBeNull();
    expect(readOrNull(b)).toBeNull();
  });
});

describe("replay across branches", () => {
  it("switchBranch undoes the current branch's calls and replays the target's, oldest first; files come back", async () => {
    w = await openWorld();
    const a = w.file("a");
    const b = w.file("b");
    const log = w.file("log");
    const cp0 = await w.s.checkpoint();
    await w.s.invoke("write_file", { path: a, text: "A on root" });
    await w.s.invoke("append_line", { path: log, line: "root 1" });
    await w.s.invoke("append_line", { path: log, line: "root 2" });
    const root = (await w.s.info()).currentBranchId;
    const rootTrack = await w.s.toolTrack();

    const other = await w.s.rollback(cp0.id);
    expect(readOrNull(a)).toBeNull();
    expect(readOrNull(log)).toBe("");
    await w.s.invoke("write_file", { path: b, text: "B on other" });
    await w.s.invoke("append_line", { path: log, line: "other 1" });
    const otherTrack = await w.s.toolTrack();
    w.calls.length = 0;

    const toRoot = await w.s.switchBranch(root);
    expect(toRoot.branch.id).toBe(root);
    expect(ids(toRoot.undone)).toEqual(ids(otherTrack).reverse());
    expect(ids(toRoot.replayed)).toEqual(ids(rootTrack));
    expect(w.calls.map((c) => [c.op, c.invocationId, c.replay])).toEqual([
      ...ids(otherTrack)
        .reverse()
        .map((id) => ["undo", id, false]),
      ...ids(rootTrack).map((id) => ["run", id, true]),
    ]);
    expect(readOrNull(a)).toBe("A on root");
    expect(readOrNull(b)).toBeNull();
    expect(readOrNull(log)).toBe("root 1\nroot 2\n");
    expect((await w.s.toolTrack()).every((t) => t.applied)).toBe(true);
    expect((await w.s.toolTrack({ branchId: other.branch.id })).every((t) => !t.applied)).toBe(true);

    // and back again: the other branch's files return
    const toOther = await w.s.switchBranch(other.branch.id);
    expect(ids(toOther.undone)).toEqual(ids(rootTrack).reverse());
    expect(ids(toOther.replayed)).toEqual(ids(otherTrack));
    expect(readOrNull(a)).toBeNull();
    expect(readOrNull(b)).toBe("B on other");
    expect(readOrNull(log)).toBe("other 1\n");
  });

  it("switching to a branch that shares a prefix only undoes and replays past the common ancestor", async () => {
    w = await openWorld();
    const shared = w.file("shared");
    const x = w.file("x");
    const y = w.file("y");
    await w.s.invoke("write_file", { path: shared, text: "S" });
    const fork = await w.s.checkpoint();
    await w.s.invoke("write_file", { path: x, text: "X" });
    const root = (await w.s.info()).currentBranchId;
    await w.s.rollback(fork.id);
    await w.s.invoke("write_file", { path: y, text: "Y" });
    const [sharedInv] = await w.s.toolTrack();
    w.calls.length = 0;

    const moved = await w.s.switchBranch(root);
    expect(moved.undone.map((t) => t.args)).toEqual([{ path: y, text: "Y" }]);
    expect(moved.replayed.map((t) => t.args)).toEqual([{ path: x, text: "X" }]);
    expect(w.calls.some((c) => c.invocationId === sharedInv!.id)).toBe(false);
    expect([readOrNull(shared), readOrNull(x), readOrNull(y)]).toEqual(["S", "X", null]);
  });

  // Review 18: a call landed with `after` on the branch another tab left is applied there; a switch back replays the
  // branch's older call, which must not land on top of it.
  it("keeps the lineage's order: a later call still applied is undone first and replayed after the older one", async () => {
    w = await openWorld();
    const log = w.file("log.txt");
    const start = await w.s.checkpoint();
    await w.s.invoke("append_line", { path: log, line: "a" });
    const [q] = await w.s.append({ role: "user", content: "q" });
    const tab = await w.s.rollback(start.id);
    await w.s.invoke("append_line", { path: log, line: "b" }, { after: q!.id });
    expect(readOrNull(log)).toBe("b\n");
    const back = await w.s.switchBranch(tab.branch.parentId!);
    expect(back.undone.map((t) => t.args)).toEqual([{ path: log, line: "b" }]);
    expect(back.replayed.map((t) => t.args)).toEqual([
      { path: log, line: "a" },
      { path: log, line: "b" },
    ]);
    expect(readOrNull(log)).toBe("a\nb\n");
  });

  it("a replay's result is recorded, and a later undo receives the most recent application's result", async () => {
    w = await openWorld();
    const f = w.file("f");
    fs.writeFileSync(f, "orig");
    const cp0 = await w.s.checkpoint();
    await w.s.invoke("write_file", { path: f, text: "A" });
    const root = (await w.s.info()).currentBranchId;
    const [inv] = await w.s.toolTrack();
    expect(inv!.result).toEqual({ previous: "orig" });

    await w.s.rollback(cp0.id);
    expect(readOrNull(f)).toBe("orig");
    fs.writeFileSync(f, "changed outside"); // the world changed behind forkpoint's back

    const back = await w.s.switchBranch(root);
    expect(ids(back.replayed)).toEqual([inv!.id]);
    expect(w.calls.at(-1)).toMatchObject({ op: "run", invocationId: inv!.id, replay: true, result: { previous: "changed outside" } });
    expect(readOrNull(f)).toBe("A");
    // the replay's result is in the move journal
    const journaled = await rows<{ result: string }>(
      w.dbPath,
      "SELECT result FROM move_steps WHERE op = 'replay' AND entry_id = $1",
      inv!.id,
    );
    expect(journaled.map((r) => JSON.parse(r.result))).toEqual([{ previous: "changed outside" }]);
    // the recorded call itself never changes
    expect((await w.s.toolTrack())[0]!.result).toEqual({ previous: "orig" });

    w.calls.length = 0;
    await w.s.rollback(cp0.id);
    expect(w.calls).toEqual([expect.objectContaining({ op: "undo", invocationId: inv!.id, result: { previous: "changed outside" } })]);
    expect(readOrNull(f)).toBe("changed outside");
  });
});

describe("failed invocations", () => {
  it("are never undone nor replayed", async () => {
    w = await openWorld();
    const a = w.file("a");
    const boom = w.file("boom");
    const cp0 = await w.s.checkpoint();
    await w.s.invoke("write_file", { path: a, text: "A" });
    await w.s.invoke("explode", { path: boom }).catch(() => undefined);
    w.control.failRun = true;
    await w.s.invoke("flaky_write", { path: w.file("never"), text: "N" }).catch(() => undefined);
    w.control.failRun = false;
    const root = (await w.s.info()).currentBranchId;
    const track = await w.s.toolTrack();
    expect(track.map((t) => t.status)).toEqual(["succeeded", "failed", "failed"]);

    const away = await w.s.rollback(cp0.id);
    expect(ids(away.undone)).toEqual([track[0]!.id]);
    expect(away.skipped).toEqual([]);
    expect(away.failed).toEqual([]);
    const back = await w.s.switchBranch(root);
    expect(ids(back.replayed)).toEqual([track[0]!.id]);
    expect(back.skipped).toEqual([]);

    const touched = w.calls.filter((c) => c.invocationId === track[1]!.id || c.invocationId === track[2]!.id);
    expect(touched.map((c) => [c.op, c.replay])).toEqual([
      ["run", false],
      ["run", false],
    ]);
    expect(fs.existsSync(`${boom}.undone`)).toBe(false);
    expect(readOrNull(w.file("never"))).toBeNull();
  });
});

describe("edit", () => {
  it("moves the world to just before the edited message, and switching back replays", async () => {
    w = await openWorld();
    const a = w.file("a");
    const b = w.file("b");
    await w.s.append({ role: "user", content: "make a" });
    await w.s.invoke("write_file", { path: a, text: "A" });
    const [question] = await w.s.append({ role: "user", content: "now make b" });
    await w.s.invoke("write_file", { path: b, text: "B" });
    const root = (await w.s.info()).currentBranchId;
    const track = await w.s.toolTrack();

    const edited = await w.s.edit(question!.id, { role: "user", content: "actually, leave b alone" });
    expect(ids(edited.undone)).toEqual([track[1]!.id]);
    expect(edited.message.content).toBe("actually, leave b alone");
    expect(edited.branch.parentId).toBe(root);
    expect((await w.s.info()).currentBranchId).toBe(edited.branch.id);
    expect(readOrNull(a)).toBe("A");
    expect(readOrNull(b)).toBeNull();
    expect(ids(await w.s.toolTrack())).toEqual([track[0]!.id]);

    const back = await w.s.switchBranch(root);
    expect(ids(back.replayed)).toEqual([track[1]!.id]);
    expect(readOrNull(b)).toBe("B");
  });

  it("editing a message of another branch moves the world from the current branch to that lineage", async () => {
    w = await openWorld();
    const a = w.file("a");
    const c = w.file("c");
    const cp0 = await w.s.checkpoint();
    const [m1] = await w.s.append({ role: "user", content: "make a" });
    await w.s.invoke("write_file", { path: a, text: "A" });
    const [m2] = await w.s.append({ role: "user", content: "more" });
    await w.s.invoke("append_line", { path: a, line: "more" });
    const rootTrack = await w.s.toolTrack();
    await w.s.rollback(cp0.id);
    await w.s.invoke("write_file", { path: c, text: "C" });
    const [cInv] = await w.s.toolTrack();
    expect(readOrNull(a)).toBeNull();

    const edited = await w.s.edit(m2!.id, { role: "user", content: "less" });
    expect(ids(edited.undone)).toEqual([cInv!.id]);
    expect(ids(edited.replayed)).toEqual([rootTrack[0]!.id]);
    expect(readOrNull(a)).toBe("A");
    expect(readOrNull(c)).toBeNull();
    expect((await w.s.history()).map((m) => m.content)).toEqual([m1!.content, "less"]);
    expect(successfulUndos(w.calls).get(rootTrack[1]!.id)).toBe(1); // undone once, by the first rollback
  });
});
