// Chat reading: one message by id, history pages before a position, and each message's `< i/n >` versions in one call.
import { describe, expect, it } from "vitest";
import { NotFoundError, ValidationError } from "../../src/index.js";
import { dumpOf } from "../fixtures/backend.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

async function chat(n: number) {
  const { fp, path } = dbs.open();
  const s = await fp.createSession({ userId: "alice" });
  const msgs = await s.append(Array.from({ length: n }, (_, i) => ({ role: i % 2 === 0 ? "user" : "assistant", content: `m${i + 1}` })));
  return { fp, path, s, msgs };
}

describe("message(id)", () => {
  it("reads a message of any branch of the session", async () => {
    const { s, msgs } = await chat(3);
    const { message } = await s.edit(msgs[1]!.id, { content: "m2'" });
    expect(await s.message(msgs[2]!.id)).toEqual(msgs[2]);
    expect(await s.message(message.id)).toEqual(message);
  });

  it("is NotFoundError for unknown ids, other sessions' and other users' messages", async () => {
    const { fp, s } = await chat(1);
    const other = await fp.createSession({ userId: "alice" });
    const [theirs] = await other.append({ role: "user", content: "x" });
    const bob = await fp.createSession({ userId: "bob" });
    const [bobs] = await bob.append({ role: "user", content: "y" });
    for (const id of ["msg_nope", theirs!.id, bobs!.id]) {
      const e = await s.message(id).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(NotFoundError);
      expect(e).toMatchObject({ kind: "message", id });
    }
  });
});

describe("history pages", () => {
  it("returns the last `limit` messages, and `before: page[0].position` pages back to the start", async () => {
    const { s } = await chat(7);
    await s.setState({ x: 1 }); // a non-message entry between messages
    await s.append({ role: "user", content: "m8" });
    const all = await s.history();
    const seen: string[][] = [];
    let page = await s.history({ limit: 3 });
    while (page.length > 0) {
      seen.unshift(page.map((m) => m.content as string));
      page = await s.history({ limit: 3, before: page[0]!.position });
    }
    expect(seen).toEqual([
      ["m1", "m2"],
      ["m3", "m4", "m5"],
      ["m6", "m7", "m8"],
    ]);
    expect(seen.flat()).toEqual(all.map((m) => m.content));
  });

  it("reads across the ancestry of a forked branch, and of `branchId`", async () => {
    const { s, msgs } = await chat(4);
    const root = (await s.info()).currentBranchId;
    const { message } = await s.edit(msgs[2]!.id, { content: "m3'" });
    await s.append({ role: "assistant", content: "m4'" });
    expect((await s.history({ limit: 3 })).map((m) => m.content)).toEqual(["m2", "m3'", "m4'"]);
    expect((await s.history({ limit: 2, before: message.position })).map((m) => m.content)).toEqual(["m1", "m2"]);
    expect((await s.history({ branchId: root, limit: 2 })).map((m) => m.content)).toEqual(["m3", "m4"]);
    expect(await s.history({ before: 1 })).toEqual([]);
  });

  it("with versions: every message carries { index, count, branchIds } equal to versions(id)", async () => {
    const { s, msgs } = await chat(4);
    const root = (await s.info()).currentBranchId;
    const a = await s.edit(msgs[0]!.id, { content: "m1'" }); // the first message: forked at position 0
    await s.append({ role: "assistant", content: "m2 of m1'" });
    const b = await s.edit(msgs[2]!.id, { content: "m3'" });
    const c = await s.regenerate(msgs[3]!.id, { content: "m4 again" });
    await s.switchBranch(b.branch.id);
    await s.append({ role: "assistant", content: "m4 of m3'" });

    for (const branchId of [root, a.branch.id, b.branch.id, c.branch.id]) {
      const page = await s.history({ branchId, withVersions: true });
      expect(page.length).toBeGreaterThan(0);
      for (const m of page) {
        const v = await s.versions(m.id);
        expect(m.versions).toEqual({ index: v.index, count: v.count, branchIds: v.versions.map((x) => x.branchId) });
      }
    }
    const page = await s.history({ branchId: root, withVersions: true, limit: 2 });
    expect(page.map((m) => [m.content, m.versions.index, m.versions.count])).toEqual([
      ["m3", 0, 2],
      ["m4", 0, 2],
    ]);
    const first = await s.history({ branchId: root, withVersions: true, limit: 1, before: 2 });
    expect(first[0]!.versions).toEqual({ index: 0, count: 2, branchIds: [root, a.branch.id] });
  });

  it("refuses a bad limit or before with a ValidationError naming it, and writes nothing", async () => {
    const { s, path } = await chat(2);
    const before = await dumpOf(path);
    const cases: [unknown, string][] = [
      [{ limit: 0 }, "limit"],
      [{ limit: 1.5 }, "limit"],
      [{ limit: 100_000 }, "limit"],
      [{ limit: "5" }, "limit"],
      [{ before: 0 }, "before"],
      [{ before: -3 }, "before"],
      [{ withVersions: "yes" }, "withVersions"],
      [{ page: 2 }, "options"],
    ];
    for (const [options, field] of cases) {
      const e = await s.history(options as never).catch((x: unknown) => x);
      expect(e, JSON.stringify(options)).toBeInstanceOf(ValidationError);
      expect(e).toMatchObject({ field });
    }
    expect(await dumpOf(path)).toEqual(before);
  });
});
