// Operator listings (every user's sessions, the users) and getCheckpoint by id, scoped to its owner.
import { describe, expect, it } from "vitest";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

describe("operator listings", () => {
  it("lists every user's sessions newest first, page by page", async () => {
    const { fp } = dbs.open();
    const made = [];
    for (const userId of ["ann", "bob", "ann", "cy", "bob"])
      made.push(await fp.createSession({ userId, title: `${userId} ${made.length}` }));
    const first = await fp.listSessions({ all: true, limit: 3 });
    expect(first.items.map((s) => s.id)).toEqual(
      made
        .slice(2)
        .reverse()
        .map((s) => s.id),
    );
    expect(first.nextCursor).not.toBeNull();
    const second = await fp.listSessions({ all: true, limit: 3, cursor: first.nextCursor });
    expect(second.items.map((s) => [s.id, s.userId])).toEqual([
      [made[1]!.id, "bob"],
      [made[0]!.id, "ann"],
    ]);
    expect(second.nextCursor).toBeNull();
    // A user's listing is unchanged.
    expect((await fp.listSessions({ userId: "cy" })).items.map((s) => s.id)).toEqual([made[3]!.id]);
  });

  it("lists the users by id, with their session counts and latest update, page by page", async () => {
    const { fp } = dbs.open();
    for (const userId of ["cy", "ann", "bob", "ann"]) await fp.createSession({ userId });
    const bobs = await fp.createSession({ userId: "bob" });
    const [appended] = await bobs.append({ role: "user", content: "later" });
    const first = await fp.listUsers({ limit: 2 });
    expect(first.items.map((u) => [u.userId, u.sessions])).toEqual([
      ["ann", 2],
      ["bob", 2],
    ]);
    expect(first.items[1]!.updatedAt).toEqual(appended!.createdAt);
    const second = await fp.listUsers({ limit: 2, cursor: first.nextCursor });
    expect(second).toMatchObject({ items: [{ userId: "cy", sessions: 1 }], nextCursor: null });
    expect(await (await dbs.open()).fp.listUsers()).toEqual({ items: [], nextCursor: null });
  });

  it("refuses cursors it did not make", async () => {
    const { fp } = dbs.open();
    await expect(fp.listUsers({ cursor: "nonsense" })).rejects.toMatchObject({ code: "VALIDATION_ERROR", field: "cursor" });
    await expect(fp.listSessions({ all: true, cursor: "nonsense" })).rejects.toMatchObject({ code: "VALIDATION_ERROR", field: "cursor" });
    await expect(fp.listSessions({ all: true, userId: "ann" } as never)).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
  });
});

describe("getCheckpoint", () => {
  it("finds a user's checkpoint by id alone; another user's, an unknown or an expired one is not found", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "ann" });
    await s.append({ role: "user", content: "hi" });
    const cp = await s.checkpoint({ name: "greeted" });
    expect(await fp.getCheckpoint(cp.id, { userId: "ann" })).toEqual(cp);
    await expect(fp.getCheckpoint(cp.id, { userId: "bob" })).rejects.toMatchObject({ code: "NOT_FOUND", kind: "checkpoint" });
    await expect(fp.getCheckpoint("cp_nope", { userId: "ann" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    const gone = await s.checkpoint({ name: "brief", expiresIn: 1 });
    await new Promise((r) => setTimeout(r, 5));
    await expect(fp.getCheckpoint(gone.id, { userId: "ann" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
