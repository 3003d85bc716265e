// Editing a message makes a new version (a branch forked just before it); versions() is the `< 2/3 >` picker.
import { describe, expect, it } from "vitest";
import { tempDatabases, type Dump } from "../helpers.js";
import { dumpOf } from "../fixtures/backend.js";

const dbs = tempDatabases();

async function chat(contents: string[]) {
  const { fp, path } = dbs.open();
  const s = await fp.createSession({ userId: "alice" });
  const root = (await s.info()).currentBranchId;
  const msgs = await s.append(contents.map((content, i) => ({ role: i % 2 === 0 ? "user" : "assistant", content })));
  return { fp, path, s, root, msgs };
}

describe("edit", () => {
  it("forks a branch just before the message, appends the new one there and makes the branch current", async () => {
    const { s, root, msgs } = await chat(["1", "2", "3"]);
    const m2 = msgs[1]!;
    const result = await s.edit(m2.id, { role: "assistant", content: "2'" });

    expect(result.message).toMatchObject({ role: "assistant", content: "2'", position: m2.position, branchId: result.branch.id });
    expect(result.message.id).not.toBe(m2.id);
    expect(result.branch).toMatchObject({ parentId: root, forkPosition: m2.position - 1, current: true });
    expect(result).toMatchObject({ undone: [], replayed: [], skipped: [], failed: [], unknown: [] });
    expect((await s.info()).currentBranchId).toBe(result.branch.id);
    expect((await s.history()).map((m) => m.content)).toEqual(["1", "2'"]);
  });

  it("leaves the original message and its branch as they were", async () => {
    const { s, root, msgs, path } = await chat(["1", "2", "3"]);
    const before = await dumpOf(path);
    await s.edit(msgs[1]!.id, { role: "assistant", content: "2'" });
    expect(await s.history({ branchId: root })).toEqual(msgs);
    const after: Dump = await dumpOf(path);
    expect(after.entries!.slice(0, before.entries!.length)).toEqual(before.entries);
  });

  it("of the first message forks at position 0", async () => {
    const { s, root, msgs } = await chat(["1", "2"]);
    const { branch, message } = await s.edit(msgs[0]!.id, { role: "user", content: "1'" });
    expect(branch).toMatchObject({ parentId: root, forkPosition: 0 });
    expect(message.position).toBe(1);
    expect(await s.history()).toEqual([message]);
    const v = await s.versions(message.id);
    expect(v.count).toBe(2);
    expect(v.index).toBe(1);
  });

  it("of a message on a non-current branch forks from that message's lineage, whatever branch is current", async () => {
    const { s, root, msgs } = await chat(["1", "2", "3"]);
    await s.edit(msgs[1]!.id, { role: "assistant", content: "2'" }); // now on another branch
    const { branch, message } = await s.edit(msgs[2]!.id, { role: "user", content: "3'" });
    expect(branch).toMatchObject({ parentId: root, forkPosition: 2, current: true });
    expect((await s.history()).map((m) => m.content)).toEqual(["1", "2", "3'"]);
    expect(message.position).toBe(3);
  });

  it("of a message that is itself an edit forks from the edit's branch", async () => {
    const { s, msgs } = await chat(["1", "2"]);
    const first = await s.edit(msgs[1]!.id, { role: "assistant", content: "2'" });
    await s.append({ role: "user", content: "3" });
    const second = await s.edit(first.message.id, { role: "assistant", content: "2''" });
    expect(second.branch.parentId).toBe(first.branch.id);
    expect((await s.history()).map((m) => m.content)).toEqual(["1", "2''"]);
  });
});

describe("versions", () => {
  it("of a message never edited is itself alone: { index: 0, count: 1 }", async () => {
    const { s, msgs } = await chat(["1", "2"]);
    expect(await s.versions(msgs[1]!.id)).toEqual({ index: 0, count: 1, versions: [{ branchId: msgs[1]!.branchId, message: msgs[1] }] });
  });

  it("lists the sibling versions in creation order, with index the queried message's 0-based place (< 2/3 >)", async () => {
    const { s, msgs } = await chat(["1", "2", "3"]);
    const original = msgs[1]!;
    const second = await s.edit(original.id, { role: "assistant", content: "2 (v2)" });
    const third = await s.edit(original.id, { role: "assistant", content: "2 (v3)" });

    const expected = [
      { branchId: original.branchId, message: original },
      { branchId: second.branch.id, message: second.message },
      { branchId: third.branch.id, message: third.message },
    ];
    expect(await s.versions(original.id)).toEqual({ index: 0, count: 3, versions: expected });
    expect(await s.versions(second.message.id)).toEqual({ index: 1, count: 3, versions: expected });
    expect(await s.versions(third.message.id)).toEqual({ index: 2, count: 3, versions: expected });
  });

  it("counts an edit made from another version as a sibling too", async () => {
    const { s, msgs } = await chat(["1", "2"]);
    const v2 = await s.edit(msgs[1]!.id, { role: "assistant", content: "v2" });
    const v3 = await s.edit(v2.message.id, { role: "assistant", content: "v3" });
    const v = await s.versions(v3.message.id);
    expect(v.count).toBe(3);
    expect(v.index).toBe(2);
    expect(v.versions.map((x) => x.message.content)).toEqual(["2", "v2", "v3"]);
  });

  it("does not count messages at the same position whose earlier history differs", async () => {
    const { s, msgs } = await chat(["1", "2", "3"]);
    await s.edit(msgs[1]!.id, { role: "assistant", content: "2'" });
    const [other3] = await s.append({ role: "user", content: "3 after 2'" });
    expect(other3!.position).toBe(msgs[2]!.position);
    expect((await s.versions(other3!.id)).count).toBe(1);
    expect((await s.versions(msgs[2]!.id)).count).toBe(1);
  });

  it("rollback to a checkpoint and append creates a second version at the next position", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append([
      { role: "user", content: "1" },
      { role: "assistant", content: "2" },
    ]);
    const cp = await s.checkpoint();
    const [m3] = await s.append({ role: "user", content: "3" });
    const { branch } = await s.rollback(cp.id);
    const [m3b] = await s.append({ role: "user", content: "3b" });

    const v = await s.versions(m3!.id);
    expect(v).toEqual({
      index: 0,
      count: 2,
      versions: [
        { branchId: m3!.branchId, message: m3 },
        { branchId: branch.id, message: m3b },
      ],
    });
    expect((await s.versions(m3b!.id)).index).toBe(1);
  });
});
