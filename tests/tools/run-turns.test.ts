// Turns at a workspace: one tool run at a time per directory; nested runs pass; a run that waits too long (a handler
// waiting on a call queued behind it) goes ahead, and neither run then claims the changes as its own.
import { describe, expect, it } from "vitest";
import { takeRunTurn } from "../../src/sessions/workspace/run-turns.js";

const open = new AbortController().signal;
const tick = () => new Promise((r) => setTimeout(r, 5));

describe("run turns", () => {
  it("the second run on a directory starts once the first is released; another directory does not wait", async () => {
    const first = await takeRunTurn("/w", open);
    let second = false;
    const next = takeRunTurn("/w", open).then((t) => ((second = true), t));
    const other = await takeRunTurn("/other", open);
    await tick();
    expect(second).toBe(false);
    first.release();
    const t = await next;
    expect([second, first.shared, t.shared, other.shared]).toEqual([true, false, false, false]);
    t.release();
    other.release();
  });

  it("a run from inside a run passes at once", async () => {
    const outer = await takeRunTurn("/w", open);
    const inner = await outer.within(() => takeRunTurn("/w", open));
    expect(inner.shared).toBe(false);
    inner.release();
    outer.release();
  });

  it("a run that waits longer than the limit goes ahead; both runs are then shared, and the next waits for both", async () => {
    const holder = await takeRunTurn("/w", open, 20);
    const ahead = await takeRunTurn("/w", open, 20);
    expect([holder.shared, ahead.shared]).toEqual([true, true]);
    let third = false;
    const next = takeRunTurn("/w", open, 1_000).then((t) => ((third = true), t));
    holder.release();
    await tick();
    expect(third).toBe(false);
    ahead.release();
    (await next).release();
    expect(third).toBe(true);
  });

  it("a run that went ahead and ended still holds back the next until the run it went past ends", async () => {
    const holder = await takeRunTurn("/w", open, 20);
    const ahead = await takeRunTurn("/w", open, 20);
    ahead.release();
    let next = false;
    const waiting = takeRunTurn("/w", open, 1_000).then((t) => ((next = true), t));
    await tick();
    expect(next).toBe(false);
    holder.release();
    (await waiting).release();
    expect(next).toBe(true);
  });

  it("closing stops the wait", async () => {
    const holder = await takeRunTurn("/w", open);
    const closing = new AbortController();
    const waiting = takeRunTurn("/w", closing.signal, 60_000);
    closing.abort();
    const t = await waiting;
    expect(t.shared).toBe(true);
    t.release();
    holder.release();
  });
});
