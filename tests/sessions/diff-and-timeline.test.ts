// diff(a, b) of two checkpoints, in the exact shape of DESIGN.md's settled details; the session timeline, newest first.
import { describe, expect, it } from "vitest";
import type { TimelineItem } from "../../src/index.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

describe("diff", () => {
  it("has exactly the shape { state: { added, removed, changed }, messages: { common, onlyA, onlyB }, tools: { common, onlyA, onlyB } }", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const cp = await s.checkpoint();
    expect(await s.diff(cp.id, cp.id)).toEqual({
      state: { added: [], removed: [], changed: [] },
      messages: { common: 0, onlyA: [], onlyB: [] },
      tools: { common: 0, onlyA: [], onlyB: [] },
    });
  });

  it("reports state paths as arrays of object keys, with added values, removed values and changed from/to", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.setState({ keep: 1, gone: "x", nested: { a: 1, b: { c: true } }, list: [1, 2], same: [1] });
    const a = await s.checkpoint();
    await s.setState({ keep: 1, nested: { a: 2, b: { c: true, d: null } }, list: [1, 2, 3], same: [1], fresh: { k: "v" } });
    const b = await s.checkpoint();

    const d = await s.diff(a.id, b.id);
    expect(d.state).toEqual({
      added: expect.arrayContaining([
        { path: ["nested", "b", "d"], value: null },
        { path: ["fresh"], value: { k: "v" } },
      ]),
      removed: [{ path: ["gone"], value: "x" }],
      changed: expect.arrayContaining([
        { path: ["nested", "a"], from: 1, to: 2 },
        { path: ["list"], from: [1, 2], to: [1, 2, 3] }, // arrays compare as whole values
      ]),
    });
    expect(d.state.added).toHaveLength(2);
    expect(d.state.changed).toHaveLength(2);
  });

  it("reports a non-object state as changed at path []", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.setState([1, 2]);
    const a = await s.checkpoint();
    await s.setState("done");
    const b = await s.checkpoint();
    expect((await s.diff(a.id, b.id)).state).toEqual({ added: [], removed: [], changed: [{ path: [], from: [1, 2], to: "done" }] });
  });

  it("splits messages into the length of the common prefix and each side's rest, across branches", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const [m1] = await s.append({ role: "user", content: "1" });
    const fork = await s.checkpoint();
    const rootRest = await s.append([
      { role: "assistant", content: "2" },
      { role: "user", content: "3" },
    ]);
    const a = await s.checkpoint();
    await s.rollback(fork.id);
    const branchRest = await s.append({ role: "assistant", content: "2'" });
    const b = await s.checkpoint();

    const d = await s.diff(a.id, b.id);
    expect(d.messages).toEqual({ common: 1, onlyA: rootRest, onlyB: branchRest });
    expect(d.tools).toEqual({ common: 0, onlyA: [], onlyB: [] });
    expect((await s.diff(b.id, a.id)).messages).toEqual({ common: 1, onlyA: branchRest, onlyB: rootRest });
    expect((await s.diff(fork.id, a.id)).messages).toEqual({ common: 1, onlyA: [], onlyB: rootRest });
    expect(m1).toBeDefined();
  });

  it("on the same branch, an earlier checkpoint is a prefix of a later one", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append([
      { role: "user", content: "1" },
      { role: "user", content: "2" },
    ]);
    const a = await s.checkpoint();
    const later = await s.append({ role: "user", content: "3" });
    const b = await s.checkpoint();
    expect((await s.diff(a.id, b.id)).messages).toEqual({ common: 2, onlyA: [], onlyB: later });
  });
});

describe("timeline", () => {
  it("lists everything that happened in the session across branches, newest first, as { items, nextCursor }", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const root = (await s.info()).currentBranchId;
    // Done back to back: several events may share a millisecond, and the order must still be the order they happened in.
    const [m1] = await s.append({ role: "user", content: "1" });
    await s.setState({ a: 1 });
    const cp = await s.checkpoint({ name: "here" });
    const [m2] = await s.append({ role: "user", content: "2" });
    const { branch } = await s.rollback(cp.id);
    const [m3] = await s.append({ role: "user", content: "3" });
    await s.switchBranch(root);

    const page = await s.timeline();
    expect(page.nextCursor).toBeNull();
    expect(page.items.map((i) => i.kind)).toEqual(["switch", "message", "branch", "message", "checkpoint", "state", "message"]);
    const ids = page.items.map((i) => i.id);
    expect(ids[1]).toBe(m3!.id);
    expect(ids[2]).toBe(branch.id);
    expect(ids[3]).toBe(m2!.id);
    expect(ids[4]).toBe(cp.id);
    expect(ids[6]).toBe(m1!.id);
    for (let i = 1; i < page.items.length; i++) {
      expect(page.items[i - 1]!.at.getTime()).toBeGreaterThanOrEqual(page.items[i]!.at.getTime());
    }
    for (const item of page.items) {
      expect(item).toEqual({
        kind: item.kind,
        id: expect.any(String),
        branchId: expect.any(String),
        at: expect.any(Date),
        summary: expect.any(String),
      });
    }
  });

  it("orders events of the same millisecond by when they happened: a checkpoint taken after a message is newer", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const expected: string[] = [];
    for (let i = 0; i < 30; i++) {
      const [m] = await s.append({ role: "user", content: `${i}` });
      const cp = await s.checkpoint();
      expected.unshift(m!.id);
      expected.unshift(cp.id);
    }
    expect((await s.timeline({ limit: 1000 })).items.map((i) => i.id)).toEqual(expected);
  });

  it("pages with a cursor through every item exactly once, nextCursor null at the end", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    for (let i = 0; i < 7; i++) {
      await s.append({ role: "user", content: `${i}` });
      if (i % 2 === 0) await s.checkpoint();
    }
    const all = (await s.timeline({ limit: 1000 })).items;
    expect(all).toHaveLength(11);
    const paged: TimelineItem[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await s.timeline({ limit: 3, cursor });
      paged.push(...page.items);
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== null && pages < 50);
    expect(pages).toBe(4);
    expect(paged).toEqual(all);
  });

  it("does not show another session's events", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const other = await fp.createSession({ userId: "alice" });
    const [mine] = await s.append({ role: "user", content: "mine" });
    await other.append({ role: "user", content: "theirs" });
    await other.checkpoint();
    expect((await s.timeline()).items.map((i) => i.id)).toEqual([mine!.id]);
  });
});
