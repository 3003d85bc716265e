// A failed atomic block's continued branches travel with the session: in an export, its import, and a clone.
import { describe, expect, it } from "vitest";
import type { SessionExport, SessionHandle } from "../../src/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const contents = async (s: SessionHandle) => (await s.history()).map((m) => m.content);
const at = async (s: SessionHandle) => (await s.info()).currentBranchId;

async function failedBlock() {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  await s.append({ role: "user", content: "q" });
  const x = await at(s);
  await rejectionOf(
    s.atomic(async () => {
      await s.append({ role: "assistant", content: "half" });
      throw new Error("block failed");
    }),
  );
  const r = await at(s);
  await s.append({ role: "assistant", content: "real" });
  return { fp, s, x, r };
}

describe("a failed atomic block's branches in a copy", () => {
  it("an export names the continuation; its import enters the block's branch where the rollback left it", async () => {
    const { fp, s, x, r } = await failedBlock();
    const doc = await fp.exportSession(s.id, { userId: "u" });
    expect(doc.branches.find((b) => b.id === x)).toMatchObject({ continuedBy: r, continuedAt: 2 });
    const copy = await dbs.open().fp.importSession(doc, { userId: "v" });
    const moved = await copy.switchBranch(x);
    expect(moved.branch.id).toBe(r);
    expect(await contents(copy)).toEqual(["q", "real"]);
    const last = (await copy.history({ withVersions: true })).at(-1)!;
    expect(last.versions).toMatchObject({ count: 1 });
  });

  it("a clone enters the block's branch where the rollback left it", async () => {
    const { fp, s } = await failedBlock();
    const copy = await fp.clone(s.id, { userId: "u" });
    const root = (await copy.branches()).find((b) => b.parentId === null)!;
    await copy.switchBranch(root.id);
    expect(await contents(copy)).toEqual(["q", "real"]);
  });

  it("a document without continuations imports as before; one naming an unknown branch is refused", async () => {
    const { fp, s, x } = await failedBlock();
    const doc: SessionExport = await fp.exportSession(s.id, { userId: "u" });
    const plain = { ...doc, branches: doc.branches.map(({ continuedBy: _b, continuedAt: _a, ...b }) => b) };
    const copy = await dbs.open().fp.importSession(plain, { userId: "v" });
    await copy.switchBranch(x);
    expect(await contents(copy)).toEqual(["q", "half"]);
    const bad = { ...doc, branches: doc.branches.map((b) => (b.id === x ? { ...b, continuedBy: "br_unknown" } : b)) };
    expect((await rejectionOf(dbs.open().fp.importSession(bad, { userId: "v" }))).name).toBe("ValidationError");
  });

  it("an export keeps where the block's writes begin on a branch it continues: earlier versions stay versions", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const c0 = await s.checkpoint({ name: "c0" });
    await s.append({ role: "user", content: "zz" });
    await s.rollback(c0.id);
    await s.append({ role: "user", content: "q" });
    const [a1] = await s.append({ role: "assistant", content: "a1" });
    const a = await at(s);
    const x = (await s.edit(a1!.id, { content: "a2" })).branch.id;
    const [follow] = await s.append({ role: "user", content: "x-followup" });
    await s.switchBranch(a);
    await rejectionOf(
      s.atomic(async () => {
        await s.append({ role: "assistant", content: "blk" }, { after: follow!.id });
        throw new Error("block failed");
      }),
    );
    const doc = await fp.exportSession(s.id, { userId: "u" });
    expect(doc.branches.find((b) => b.id === x)).toMatchObject({ continuedAt: 4, continuedFrom: 3 });
    for (const copy of [await dbs.open().fp.importSession(doc, { userId: "v" }), await fp.clone(s.id, { userId: "u" })]) {
      const first = (await copy.history()).find((m) => m.content === "a1")!;
      expect((await copy.versions(first.id)).versions.map((v) => v.message.content)).toEqual(["a1", "a2"]);
    }
    const bad = { ...doc, branches: doc.branches.map((b) => (b.id === x ? { ...b, continuedFrom: 5 } : b)) };
    expect((await rejectionOf(dbs.open().fp.importSession(bad, { userId: "v" }))).name).toBe("ValidationError");
  });
});
