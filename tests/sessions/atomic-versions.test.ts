// A message a failed atomic block wrote is no `< n/m >` version of the answer written after it, nor it of that one.
import { describe, expect, it } from "vitest";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

describe("versions after a failed atomic block", () => {
  it("do not count the block's message; a real version still counts", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "q" });
    const x = (await s.info()).currentBranchId;
    const block = async () => {
      await s.append({ role: "assistant", content: "half" });
      throw new Error("block failed");
    };
    await rejectionOf(s.atomic(block));
    const [a] = await s.append({ role: "assistant", content: "real answer" });
    const last = (await s.history({ withVersions: true })).at(-1)!;
    expect(last.content).toBe("real answer");
    expect(last.versions).toMatchObject({ index: 0, count: 1 });
    expect((await s.versions(a!.id)).versions.map((v) => v.message.content)).toEqual(["real answer"]);
    // The block's message, read on its own branch, stands alone.
    const half = (await s.history({ branchId: x, withVersions: true })).at(-1)!;
    expect(half.content).toBe("half");
    expect(half.versions).toMatchObject({ index: 0, count: 1 });
    expect(await s.versions(half.id)).toMatchObject({ index: 0, count: 1 });
    // An answer written again (an edit of it) is a version as ever.
    await s.edit(a!.id, { role: "assistant", content: "second answer" });
    expect((await s.versions(a!.id)).versions.map((v) => v.message.content)).toEqual(["real answer", "second answer"]);
  });

  it("do not count a message the block edited or regenerated", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const [q, a] = await s.append([
      { role: "user", content: "q" },
      { role: "assistant", content: "a" },
    ]);
    await rejectionOf(
      s.atomic(async () => {
        await s.edit(q!.id, { content: "q edited in the block" });
        await s.append({ role: "assistant", content: "a in the block" });
        throw new Error("block failed");
      }),
    );
    await rejectionOf(
      s.atomic(async () => {
        await s.regenerate(a!.id, { content: "regenerated in the block" });
        throw new Error("block failed");
      }),
    );
    const counts = (await s.history({ withVersions: true })).map((m) => [m.content, m.versions?.count]);
    expect(counts).toEqual([
      ["q", 1],
      ["a", 1],
    ]);
    expect((await s.versions(q!.id)).versions.map((v) => v.message.content)).toEqual(["q"]);
    expect((await s.versions(a!.id)).versions.map((v) => v.message.content)).toEqual(["a"]);
  });

  it("keep an earlier version on a branch the block wrote on, and hide only what the block wrote there", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    // A branch made before the first message: the block's checkpoint's entry is older than the edit branch's.
    const c0 = await s.checkpoint({ name: "c0" });
    await s.append({ role: "user", content: "zz" });
    await s.rollback(c0.id);
    await s.append({ role: "user", content: "q" });
    const [a1] = await s.append({ role: "assistant", content: "a1" });
    const a = (await s.info()).currentBranchId;
    const x = (await s.edit(a1!.id, { content: "a2" })).branch.id;
    const [follow] = await s.append({ role: "user", content: "x-followup" });
    await s.switchBranch(a);
    const block = async () => {
      await s.append({ role: "assistant", content: "blk-on-x" }, { after: follow!.id });
      throw new Error("block failed");
    };
    await rejectionOf(s.atomic(block));
    expect((await s.versions(a1!.id)).versions.map((v) => v.message.content)).toEqual(["a1", "a2"]);
    const onX = await s.history({ branchId: x, withVersions: true });
    expect(onX.map((m) => [m.content, m.versions.count])).toEqual([
      ["q", 2],
      ["a2", 2],
      ["x-followup", 1],
      ["blk-on-x", 1],
    ]);
    const [again] = await s.append({ role: "assistant", content: "answer" }, { after: follow!.id });
    expect((await s.versions(again!.id)).versions.map((v) => v.message.content)).toEqual(["answer"]);
  });

  it("a version's branch, after a block that only edited and failed, is the conversation as it went on", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const [, a] = await s.append([
      { role: "user", content: "q" },
      { role: "assistant", content: "a" },
    ]);
    await rejectionOf(
      s.atomic(async () => {
        await s.edit(a!.id, { content: "a edited in the block" }); // nothing written on the branch it began on
        throw new Error("block failed");
      }),
    );
    await s.append({ role: "user", content: "later" });
    const picker = await s.versions(a!.id);
    expect(picker.versions.map((v) => v.message.content)).toEqual(["a"]);
    // The picker's branch for `a`: the conversation that went on after the block, not the one it began on as it was then.
    await s.switchBranch(picker.versions[0]!.branchId);
    expect((await s.history()).map((m) => m.content)).toEqual(["q", "a", "later"]);
  });
  it("do not count a message the block wrote elsewhere when it moved back to the root branch it began on", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const [q, a] = await s.append([
      { role: "user", content: "q" },
      { role: "assistant", content: "a" },
    ]);
    const cp = await s.checkpoint({ name: "after q" });
    // Each block leaves the root branch and comes back: its rollback finds the session at its checkpoint already.
    await rejectionOf(
      s.atomic(async () => {
        await s.edit(a!.id, { content: "edited in the block" });
        await s.switchBranch(a!.branchId);
        throw new Error("block failed");
      }),
    );
    await rejectionOf(
      s.atomic(async () => {
        await s.rollback(cp.id);
        await s.append({ role: "assistant", content: "answered in the block" });
        await s.undo();
        throw new Error("block failed");
      }),
    );
    expect((await s.history({ withVersions: true })).map((m) => [m.content, m.versions?.count])).toEqual([
      ["q", 1],
      ["a", 1],
    ]);
    expect((await s.versions(a!.id)).versions.map((v) => v.message.content)).toEqual(["a"]);
    expect((await s.versions(q!.id)).count).toBe(1);
  });
});
