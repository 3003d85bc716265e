// s.expire(cpId): a checkpoint ends its life now, as with a TTL; a fork point stays readable through its branch.
import { describe, expect, it } from "vitest";
import { NotFoundError } from "../../src/index.js";
import { dumpOf } from "../fixtures/backend.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

describe("expire", () => {
  it("hides the checkpoint from listings, restore and getCheckpoint at once; prune deletes it", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const a = await s.checkpoint({ name: "a" });
    const b = await s.checkpoint({ name: "b" });
    await s.expire(a.id);
    expect((await s.listCheckpoints()).items.map((c) => c.id)).toEqual([b.id]);
    await expect(s.restore(a.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(fp.getCheckpoint(a.id, { userId: "u" })).rejects.toBeInstanceOf(NotFoundError);
    await expect(s.expire(a.id)).rejects.toBeInstanceOf(NotFoundError);
    expect((await fp.prune({ vacuum: false })).checkpoints).toBe(1);
  });

  it("leaves expired checkpoints (expire() or expiresIn) out of the timeline before prune, its pages joining up", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const kept: string[] = [];
    for (let i = 0; i < 4; i++) {
      await s.append({ role: "user", content: `m${i}` });
      kept.push((await s.checkpoint({ name: `keep${i}` })).id);
      const gone = await s.checkpoint({ name: `gone${i}`, ...(i % 2 ? { expiresIn: 1 } : {}) });
      if (i % 2 === 0) await s.expire(gone.id);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    const all = (await s.timeline({ limit: 1000 })).items;
    expect(all.filter((i) => i.kind === "checkpoint").map((i) => i.id)).toEqual([...kept].reverse());
    expect(all).toHaveLength(4 + 4);
    for (const limit of [1, 2, 3]) {
      const paged = [];
      let cursor: string | null = null;
      do {
        const page = await s.timeline({ limit, cursor });
        paged.push(...page.items);
        cursor = page.nextCursor;
      } while (cursor);
      expect(paged).toEqual(all);
    }
    expect((await s.summary()).checkpoints).toBe(4);
  });

  it("a fork point expires but is kept: its branch still reads the history", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "one" });
    const fork = await s.checkpoint({ name: "fork" });
    await s.append({ role: "user", content: "two" });
    await s.rollback(fork.id);
    await s.append({ role: "user", content: "three" });
    await s.expire(fork.id);
    expect((await s.listCheckpoints()).items).toEqual([]);
    expect((await fp.prune({ vacuum: false })).checkpoints).toBe(0);
    expect((await s.history()).map((m) => m.content)).toEqual(["one", "three"]);
  });

  it("leaves the session intact: verify passes, and export, import and clone still work with an expired fork point", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "one" });
    const fork = await s.checkpoint({ name: "fork" });
    await s.append({ role: "user", content: "two" });
    const plain = await s.checkpoint({ name: "plain" });
    await s.rollback(fork.id);
    await s.expire(fork.id);
    await s.expire(plain.id);
    expect(await fp.verify()).toMatchObject({ ok: true, problems: [] });
    const doc = await fp.exportSession(s.id, { userId: "u" });
    const copy = await dbs.open().fp.importSession(doc, { userId: "u" });
    expect((await copy.history()).map((m) => m.content)).toEqual(["one"]);
    const twin = await fp.clone(s.id, { userId: "u" });
    expect((await twin.branches()).length).toBe(2);
    expect(await fp.verify()).toMatchObject({ ok: true, problems: [] });
  });

  it("refuses other sessions' and other users' checkpoints, changing nothing", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const t = await fp.createSession({ userId: "u" });
    const v = await fp.createSession({ userId: "v" });
    const ofT = await t.checkpoint({ name: "t" });
    const ofV = await v.checkpoint({ name: "v" });
    const before = await dumpOf(path);
    await expect(s.expire(ofT.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(s.expire(ofV.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(s.expire("nope")).rejects.toBeInstanceOf(NotFoundError);
    expect(await dumpOf(path)).toEqual(before);
    expect((await t.listCheckpoints()).items.map((c) => c.id)).toEqual([ofT.id]);
  });
});
