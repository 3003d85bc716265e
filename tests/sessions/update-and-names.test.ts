// Renaming a session (update) and naming branches (nameBranch), scoped to the owner, validated.
import { describe, expect, it } from "vitest";
import { NotFoundError, ValidationError } from "../../src/index.js";
import { dumpOf } from "../fixtures/backend.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

describe("update", () => {
  it("renames the session and replaces its metadata; info() reflects it and updatedAt moves", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice", title: "Trip", metadata: { a: 1, b: 2 } });
    const first = await s.info();
    // Dates carry whole milliseconds: the update runs in a later one, so its stamp must be later.
    await new Promise((r) => setTimeout(r, 2));
    const info = await s.update({ title: "Trip to Lisbon", metadata: { c: 3 } });
    expect(info).toMatchObject({ title: "Trip to Lisbon", metadata: { c: 3 } });
    expect(await s.info()).toEqual(info);
    expect(info.updatedAt.getTime()).toBeGreaterThan(first.updatedAt.getTime());
    // Nothing to change writes nothing: updatedAt stays.
    await new Promise((r) => setTimeout(r, 2));
    expect(await s.update({})).toEqual(info);
    expect(await s.update({ title: "Trip to Lisbon", metadata: { c: 3 } })).toEqual(info);
    // A key left out is kept; null clears.
    expect(await s.update({ metadata: null })).toMatchObject({ title: "Trip to Lisbon", metadata: null });
    expect(await s.update({ title: null })).toMatchObject({ title: null, metadata: null });
  });

  it("refuses bad input with a ValidationError naming the field, and writes nothing", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice", title: "Trip" });
    const before = await dumpOf(path);
    const cases: [unknown, string][] = [
      [{ title: "" }, "title"],
      [{ title: 3 }, "title"],
      [{ metadata: [1] }, "metadata"],
      [{ metadata: { x: Number.NaN } }, "metadata.x"],
      [{ name: "x" }, "fields"],
    ];
    for (const [input, field] of cases) {
      const e = await s.update(input as never).catch((x: unknown) => x);
      expect(e, JSON.stringify(input)).toBeInstanceOf(ValidationError);
      expect(e).toMatchObject({ field });
    }
    expect(await dumpOf(path)).toEqual(before);
  });

  it("leaves other sessions as they were", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice", title: "one" });
    const other = await fp.createSession({ userId: "alice", title: "two" });
    await s.update({ title: "renamed" });
    expect((await other.info()).title).toBe("two");
  });
});

describe("nameBranch", () => {
  it("names a branch; branches() shows it; null clears it; names need not be unique", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const [m] = await s.append({ role: "user", content: "hi" });
    const root = (await s.info()).currentBranchId;
    const { branch } = await s.edit(m!.id, { content: "hello" });
    expect(await s.nameBranch(root, "formal")).toMatchObject({ id: root, name: "formal", current: false });
    await s.nameBranch(branch.id, "formal");
    expect((await s.branches()).map((b) => [b.id, b.name])).toEqual([
      [root, "formal"],
      [branch.id, "formal"],
    ]);
    await s.nameBranch(root, null);
    expect((await s.branches()).find((b) => b.id === root)!.name).toBeNull();
  });

  it("refuses another session's branch (NotFoundError) and a bad name (ValidationError), writing nothing", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const other = await fp.createSession({ userId: "alice" });
    const theirs = (await other.info()).currentBranchId;
    const mine = (await s.info()).currentBranchId;
    const before = await dumpOf(path);
    await expect(s.nameBranch(theirs, "x")).rejects.toMatchObject({ code: "NOT_FOUND", kind: "branch" });
    await expect(s.nameBranch("br_nope", "x")).rejects.toBeInstanceOf(NotFoundError);
    for (const name of ["", "   ", 7, undefined]) {
      const e = await s.nameBranch(mine, name as never).catch((x: unknown) => x);
      expect(e, String(name)).toBeInstanceOf(ValidationError);
      expect(e).toMatchObject({ field: "name" });
    }
    expect(await dumpOf(path)).toEqual(before);
  });
});
