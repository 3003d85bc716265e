// Sessions belong to one user: create, get, info, and the per-user listing with keyset pagination.
import { describe, expect, it } from "vitest";
import { NotFoundError, type Forkpoint, type SessionInfo } from "../../src/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

async function listAll(fp: Forkpoint, userId: string, limit: number): Promise<{ ids: string[]; pages: SessionInfo[][] }> {
  const pages: SessionInfo[][] = [];
  let cursor: string | null = null;
  do {
    const page = await fp.listSessions({ userId, limit, cursor });
    pages.push(page.items);
    cursor = page.nextCursor;
    if (pages.length > 100) throw new Error("pagination does not end");
  } while (cursor !== null);
  return { ids: pages.flat().map((s) => s.id), pages };
}

describe("creating a session", () => {
  it("returns a handle whose info() has the id, owner, title, metadata, current branch and Date times", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice", title: "Trip", metadata: { lang: "en", tags: ["a"] } });
    expect(s.id).toEqual(expect.any(String));
    expect(s.userId).toBe("alice");
    const info = await s.info();
    expect(info).toEqual({
      id: s.id,
      userId: "alice",
      title: "Trip",
      metadata: { lang: "en", tags: ["a"] },
      currentBranchId: expect.any(String),
      origin: null,
      createdAt: expect.any(Date),
      updatedAt: expect.any(Date),
    });
    expect(info.updatedAt.getTime()).toBeGreaterThanOrEqual(info.createdAt.getTime());
  });

  it("without a title or metadata stores null for both", async () => {
    const { fp } = dbs.open();
    const info = await (await fp.createSession({ userId: "alice" })).info();
    expect(info.title).toBeNull();
    expect(info.metadata).toBeNull();
  });

  it("starts with one root branch that is current, an empty history and the state {}", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const [root, ...others] = await s.branches();
    expect(others).toEqual([]);
    expect(root!.id).toBe((await s.info()).currentBranchId);
    expect(root!.parentId).toBeNull();
    expect(await s.history()).toEqual([]);
    expect(await s.getState()).toEqual({});
  });

  it("gives every session a distinct id", async () => {
    const { fp } = dbs.open();
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) ids.add((await fp.createSession({ userId: "alice" })).id);
    expect(ids.size).toBe(20);
  });

  it("bumps updatedAt when the session is written to, never createdAt", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const before = await s.info();
    await s.append({ role: "user", content: "hi" });
    const after = await s.info();
    expect(after.createdAt).toEqual(before.createdAt);
    expect(after.updatedAt.getTime()).toBeGreaterThanOrEqual(before.updatedAt.getTime());
  });
});

describe("getting a session", () => {
  it("returns a handle on the same session for its owner, with the same info", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice", title: "T" });
    await s.append({ role: "user", content: "hello" });
    const again = await fp.getSession(s.id, { userId: "alice" });
    expect(again.id).toBe(s.id);
    expect(again.userId).toBe("alice");
    expect(await again.info()).toEqual(await s.info());
    expect(await again.history()).toEqual(await s.history());
  });

  it("is NotFoundError for an unknown id and for another user's session", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const unknown = await rejectionOf(fp.getSession("ses_doesnotexist00", { userId: "alice" }));
    const foreign = await rejectionOf(fp.getSession(s.id, { userId: "bob" }));
    for (const e of [unknown, foreign]) {
      expect(e).toBeInstanceOf(NotFoundError);
      expect(e.code).toBe("NOT_FOUND");
    }
  });
});

describe("listing a user's sessions", () => {
  it("returns only that user's sessions, newest first, as { items, nextCursor }", async () => {
    const { fp } = dbs.open();
    const a1 = await fp.createSession({ userId: "alice", title: "a1" });
    const b1 = await fp.createSession({ userId: "bob", title: "b1" });
    const a2 = await fp.createSession({ userId: "alice", title: "a2" });
    const a3 = await fp.createSession({ userId: "alice", title: "a3" });
    const b2 = await fp.createSession({ userId: "bob", title: "b2" });

    const alice = await fp.listSessions({ userId: "alice" });
    expect(alice.items.map((s) => s.id)).toEqual([a3.id, a2.id, a1.id]);
    expect(alice.nextCursor).toBeNull();
    expect(alice.items.every((s) => s.userId === "alice")).toBe(true);
    // Its info(), with what a sidebar row shows of it (tests/sessions/list-previews.test.ts): nothing said yet.
    expect(alice.items[0]).toEqual({ ...(await a3.info()), lastMessage: null, messageCount: 0 });

    const bob = await fp.listSessions({ userId: "bob" });
    expect(bob.items.map((s) => s.id)).toEqual([b2.id, b1.id]);
  });

  it("is an empty page with a null cursor for a user without sessions", async () => {
    const { fp } = dbs.open();
    await fp.createSession({ userId: "alice" });
    expect(await fp.listSessions({ userId: "carol" })).toEqual({ items: [], nextCursor: null });
  });

  it("pages through every session exactly once, newest first, with nextCursor null on the last page", async () => {
    const { fp } = dbs.open();
    const created: string[] = [];
    for (let i = 0; i < 11; i++) {
      created.push((await fp.createSession({ userId: "alice", title: `s${i}` })).id);
      await fp.createSession({ userId: "bob" }); // interleaved rows of another user
    }
    const { ids, pages } = await listAll(fp, "alice", 4);
    expect(pages.map((p) => p.length)).toEqual([4, 4, 3]);
    expect(ids).toEqual([...created].reverse());
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("ends with nextCursor null when the last page is exactly full", async () => {
    const { fp } = dbs.open();
    for (let i = 0; i < 6; i++) await fp.createSession({ userId: "alice" });
    const first = await fp.listSessions({ userId: "alice", limit: 3 });
    expect(first.items).toHaveLength(3);
    expect(first.nextCursor).not.toBeNull();
    const second = await fp.listSessions({ userId: "alice", limit: 3, cursor: first.nextCursor });
    expect(second.items).toHaveLength(3);
    expect(second.nextCursor).toBeNull();
  });

  it("is stable under inserts between pages: later pages neither repeat nor skip older sessions", async () => {
    const { fp } = dbs.open();
    const created: string[] = [];
    for (let i = 0; i < 6; i++) created.push((await fp.createSession({ userId: "alice" })).id);
    const first = await fp.listSessions({ userId: "alice", limit: 3 });
    await fp.createSession({ userId: "alice", title: "newer" });
    const second = await fp.listSessions({ userId: "alice", limit: 3, cursor: first.nextCursor });
    expect([...first.items, ...second.items].map((s) => s.id)).toEqual([...created].reverse());
    expect(second.nextCursor).toBeNull();
  });

  it("treats a null cursor as the first page", async () => {
    const { fp } = dbs.open();
    for (let i = 0; i < 3; i++) await fp.createSession({ userId: "alice" });
    expect(await fp.listSessions({ userId: "alice", cursor: null })).toEqual(await fp.listSessions({ userId: "alice" }));
  });
});
