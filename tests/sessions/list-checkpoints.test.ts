// A user's checkpoints across sessions: filters (session, name, time window, auto) and keyset pagination.
import { describe, expect, it } from "vitest";
import type { Checkpoint, Forkpoint, ListCheckpointsInput } from "../../src/index.js";
import { sleep, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

async function listAll(fp: Forkpoint, input: ListCheckpointsInput & { limit: number }): Promise<{ items: Checkpoint[]; sizes: number[] }> {
  const items: Checkpoint[] = [];
  const sizes: number[] = [];
  let cursor: string | null = null;
  do {
    const page = await fp.listCheckpoints({ ...input, cursor });
    items.push(...page.items);
    sizes.push(page.items.length);
    cursor = page.nextCursor;
    if (sizes.length > 200) throw new Error("pagination does not end");
  } while (cursor !== null);
  return { items, sizes };
}

/** Two users; alice has two sessions with named, unnamed and automatic checkpoints; returns them in creation order. */
async function fixture() {
  const { fp } = dbs.open({ autoCheckpoint: { everyMessages: 2 } });
  const s1 = await fp.createSession({ userId: "alice", title: "one" });
  const s2 = await fp.createSession({ userId: "alice", title: "two" });
  const bob = await fp.createSession({ userId: "bob" });
  const created: Checkpoint[] = [];
  const track = async (p: Promise<unknown>) => {
    await p;
    const latest = (await fp.listCheckpoints({ userId: "alice", limit: 1 })).items[0]!;
    if (!created.some((c) => c.id === latest.id)) created.push(latest);
  };
  await track(s1.checkpoint({ name: "start" }));
  await track(s2.checkpoint({ name: "start" }));
  await track(
    s1.append([
      { role: "user", content: "a" },
      { role: "assistant", content: "b" },
    ]),
  ); // auto
  await bob.checkpoint({ name: "start" });
  await track(s2.checkpoint({ name: "middle" }));
  await track(s1.checkpoint());
  await track(
    s2.append([
      { role: "user", content: "a" },
      { role: "assistant", content: "b" },
    ]),
  ); // auto
  await track(s1.checkpoint({ name: "end" }));
  return { fp, s1, s2, bob, created };
}

describe("listCheckpoints", () => {
  it("lists all of a user's checkpoints across sessions, newest first, and none of another user's", async () => {
    const { fp, created, bob } = await fixture();
    const page = await fp.listCheckpoints({ userId: "alice" });
    expect(page.items.map((c) => c.id)).toEqual([...created].reverse().map((c) => c.id));
    expect(page.items.every((c) => c.userId === "alice")).toBe(true);
    expect(page.nextCursor).toBeNull();
    const bobs = await fp.listCheckpoints({ userId: "bob" });
    expect(bobs.items.map((c) => c.sessionId)).toEqual([bob.id]);
  });

  it("returns the same objects as checkpoint() did", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const cp = await s.checkpoint({ name: "n", metadata: { a: [1] } });
    expect((await fp.listCheckpoints({ userId: "alice" })).items).toEqual([cp]);
  });

  it("filters by session", async () => {
    const { fp, s2, created } = await fixture();
    const { items } = await fp.listCheckpoints({ userId: "alice", sessionId: s2.id });
    expect(items.map((c) => c.id)).toEqual(
      created
        .filter((c) => c.sessionId === s2.id)
        .reverse()
        .map((c) => c.id),
    );
  });

  it("filters by name", async () => {
    const { fp, created } = await fixture();
    const { items } = await fp.listCheckpoints({ userId: "alice", name: "start" });
    expect(items).toHaveLength(2);
    expect(items.map((c) => c.id)).toEqual(
      created
        .filter((c) => c.name === "start")
        .reverse()
        .map((c) => c.id),
    );
  });

  it("filters automatic and manual checkpoints apart", async () => {
    const { fp, created } = await fixture();
    const auto = await fp.listCheckpoints({ userId: "alice", auto: true });
    const manual = await fp.listCheckpoints({ userId: "alice", auto: false });
    expect(auto.items.map((c) => c.id)).toEqual(
      created
        .filter((c) => c.auto)
        .reverse()
        .map((c) => c.id),
    );
    expect(manual.items.map((c) => c.id)).toEqual(
      created
        .filter((c) => !c.auto)
        .reverse()
        .map((c) => c.id),
    );
    expect(auto.items).toHaveLength(2);
  });

  it("combines filters", async () => {
    const { fp, s1, created } = await fixture();
    const { items } = await fp.listCheckpoints({ userId: "alice", sessionId: s1.id, auto: false, name: "end" });
    expect(items.map((c) => c.id)).toEqual(created.filter((c) => c.sessionId === s1.id && c.name === "end").map((c) => c.id));
  });

  it("filters by a time window: since and until are inclusive and take Dates, ISO strings or milliseconds", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const cps: Checkpoint[] = [];
    for (let i = 0; i < 5; i++) {
      cps.push(await s.checkpoint({ name: `c${i}` }));
      await sleep(3); // distinct creation times, so the window has edges to test
    }
    const since = cps[1]!.createdAt;
    const until = cps[3]!.createdAt;
    const inWindow = (c: Checkpoint) => c.createdAt >= since && c.createdAt <= until;
    const expected = [...cps]
      .reverse()
      .filter(inWindow)
      .map((c) => c.id);
    expect(expected).toEqual([cps[3]!.id, cps[2]!.id, cps[1]!.id]);

    for (const [a, b] of [
      [since, until],
      [since.toISOString(), until.toISOString()],
      [since.getTime(), until.getTime()],
    ] as const) {
      const { items } = await fp.listCheckpoints({ userId: "alice", since: a, until: b });
      expect(items.map((c) => c.id)).toEqual(expected);
    }
    expect((await fp.listCheckpoints({ userId: "alice", since: cps[4]!.createdAt })).items.map((c) => c.id)).toEqual([cps[4]!.id]);
    expect((await fp.listCheckpoints({ userId: "alice", until: cps[0]!.createdAt })).items.map((c) => c.id)).toEqual([cps[0]!.id]);
  });

  it("pages with a keyset cursor: every checkpoint exactly once, newest first, nextCursor null at the end", async () => {
    const { fp } = dbs.open();
    const a = await fp.createSession({ userId: "alice" });
    const b = await fp.createSession({ userId: "alice" });
    const other = await fp.createSession({ userId: "bob" });
    const created: Checkpoint[] = [];
    for (let i = 0; i < 23; i++) {
      created.push(await (i % 3 === 0 ? b : a).checkpoint({ name: `c${i}` }));
      await other.checkpoint();
    }
    const { items, sizes } = await listAll(fp, { userId: "alice", limit: 10 });
    expect(sizes).toEqual([10, 10, 3]);
    expect(items.map((c) => c.id)).toEqual([...created].reverse().map((c) => c.id));
    expect(new Set(items.map((c) => c.id)).size).toBe(23);
  });

  it("pages within a filter, and a full last page ends with nextCursor null", async () => {
    const { fp } = dbs.open();
    const a = await fp.createSession({ userId: "alice" });
    const b = await fp.createSession({ userId: "alice" });
    const created: Checkpoint[] = [];
    for (let i = 0; i < 12; i++) {
      created.push(await a.checkpoint());
      await b.checkpoint();
    }
    const { items, sizes } = await listAll(fp, { userId: "alice", sessionId: a.id, limit: 4 });
    expect(sizes).toEqual([4, 4, 4]);
    expect(items.map((c) => c.id)).toEqual([...created].reverse().map((c) => c.id));
  });

  it("keeps pages consistent when checkpoints are added between page reads", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const created: Checkpoint[] = [];
    for (let i = 0; i < 6; i++) created.push(await s.checkpoint());
    const first = await fp.listCheckpoints({ userId: "alice", limit: 3 });
    await s.checkpoint({ name: "newer" });
    const second = await fp.listCheckpoints({ userId: "alice", limit: 3, cursor: first.nextCursor });
    expect([...first.items, ...second.items].map((c) => c.id)).toEqual([...created].reverse().map((c) => c.id));
  });
});
