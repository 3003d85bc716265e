// Irreversible invocations (a tool with no undo): reported as skipped, never replayed, and refusable up front.
import { afterEach, describe, expect, it } from "vitest";
import { ConflictError, type ToolInvocation } from "../../src/index.js";
import { readLog, readOrNull } from "../fixtures/file-tools.js";
import { ids, openWorld, type World } from "../fixtures/harness.js";
import { dumpOf } from "../fixtures/backend.js";

let w: World;
afterEach(async () => {
  await w?.close();
});

/** cp0, a message, write a, send an email, write b. */
async function withEmail(world: World) {
  const a = world.file("a");
  const b = world.file("b");
  const cp0 = await world.s.checkpoint({ name: "start" });
  const [msg] = await world.s.append({ role: "user", content: "write a, mail bob, write b" });
  await world.s.invoke("write_file", { path: a, text: "A" });
  await world.s.invoke("send_email", { to: "bob@example.com", subject: "done" });
  const afterMail = await world.s.checkpoint({ name: "after mail" });
  await world.s.invoke("write_file", { path: b, text: "B" });
  const track = (await world.s.toolTrack()) as [ToolInvocation, ToolInvocation, ToolInvocation];
  const root = (await world.s.info()).currentBranchId;
  return { a, b, cp0, afterMail, msg: msg!, track, root };
}

describe("irreversible invocations", () => {
  it("are reported as skipped by every move that passes them, and never replayed", async () => {
    w = await openWorld();
    const { a, b, cp0, track, root } = await withEmail(w);
    const [wa, mail, wb] = track;
    expect(readLog(w.outbox)).toHaveLength(1);

    const away = await w.s.rollback(cp0.id);
    expect(ids(away.undone)).toEqual([wb.id, wa.id]);
    expect(ids(away.skipped)).toEqual([mail.id]);
    expect([readOrNull(a), readOrNull(b)]).toEqual([null, null]);
    expect(readLog(w.outbox)).toHaveLength(1); // the mail is still out there

    const back = await w.s.switchBranch(root);
    expect(ids(back.replayed)).toEqual([wa.id, wb.id]);
    expect(ids(back.replayed)).not.toContain(mail.id);
    expect(readLog(w.outbox)).toHaveLength(1); // not sent twice
    expect([readOrNull(a), readOrNull(b)]).toEqual(["A", "B"]);

    const awayAgain = await w.s.rollback(cp0.id);
    expect(ids(awayAgain.skipped)).toEqual([mail.id]);
    expect(readLog(w.outbox)).toHaveLength(1);
    expect(w.calls.filter((c) => c.tool === "send_email").map((c) => c.replay)).toEqual([false]);
  });

  it("an edit that passes one reports it as skipped too", async () => {
    w = await openWorld();
    const { msg, track } = await withEmail(w);
    const edited = await w.s.edit(msg.id, { role: "user", content: "just write a" });
    expect(ids(edited.undone)).toEqual([track[2].id, track[0].id]);
    expect(ids(edited.skipped)).toEqual([track[1].id]);
  });

  it("a move that does not pass one reports nothing skipped", async () => {
    w = await openWorld();
    const { a, b, afterMail, track } = await withEmail(w);
    const moved = await w.s.rollback(afterMail.id, { refuseIrreversible: true });
    expect(ids(moved.undone)).toEqual([track[2].id]);
    expect(moved.skipped).toEqual([]);
    expect([readOrNull(a), readOrNull(b)]).toEqual(["A", null]);
  });

  it("refuseIrreversible refuses a rollback before doing anything: files and database unchanged", async () => {
    w = await openWorld();
    const { a, b, cp0, root } = await withEmail(w);
    const before = await dumpOf(w.dbPath);
    const callsBefore = w.calls.length;

    const error = await w.s.rollback(cp0.id, { refuseIrreversible: true }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as ConflictError).code).toBe("IRREVERSIBLE");

    expect([readOrNull(a), readOrNull(b)]).toEqual(["A", "B"]);
    expect(readLog(w.outbox)).toHaveLength(1);
    expect(w.calls.length).toBe(callsBefore); // no handler ran
    expect(await dumpOf(w.dbPath)).toEqual(before);
    expect((await w.s.info()).currentBranchId).toBe(root);
  });

  it("refuseIrreversible refuses a switch and an edit the same way", async () => {
    w = await openWorld();
    const { a, b, cp0, msg, root, track } = await withEmail(w);
    const other = await w.s.rollback(cp0.id);
    await w.s.switchBranch(root); // back at root's head: a, mail, b applied
    expect(readLog(w.outbox)).toHaveLength(1);
    const before = await dumpOf(w.dbPath);
    const callsBefore = w.calls.length;

    await expect(w.s.switchBranch(other.branch.id, { refuseIrreversible: true })).rejects.toMatchObject({
      name: "ConflictError",
      code: "IRREVERSIBLE",
    });
    await expect(w.s.edit(msg.id, { role: "user", content: "y" }, { refuseIrreversible: true })).rejects.toMatchObject({
      name: "ConflictError",
      code: "IRREVERSIBLE",
    });
    expect(await dumpOf(w.dbPath)).toEqual(before);
    expect(w.calls.length).toBe(callsBefore);
    expect([readOrNull(a), readOrNull(b)]).toEqual(["A", "B"]);
    expect((await w.s.info()).currentBranchId).toBe(root);
    expect((await w.s.toolTrack()).map((t) => t.applied)).toEqual([true, true, true]);
    expect(ids(await w.s.toolTrack())).toEqual(ids(track));
  });

  it("plan shows the irreversible calls a move would pass", async () => {
    w = await openWorld();
    const { cp0, afterMail, track } = await withEmail(w);
    const p = await w.s.plan({ checkpointId: cp0.id });
    expect(ids(p.skipped)).toEqual([track[1].id]);
    expect(ids(p.undone)).toEqual([track[2].id, track[0].id]);
    const q = await w.s.plan({ checkpointId: afterMail.id });
    expect(q.skipped).toEqual([]);
  });
});
