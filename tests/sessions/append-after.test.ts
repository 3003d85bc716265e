// append / turn with `after: messageId`: new messages follow that message on its own lineage, never another
// conversation; the current branch stays where the user put it, and the messages carry the branch they landed on.
import { describe, expect, it } from "vitest";
import { ConflictError, NotFoundError } from "../../src/index.js";
import { countRowsOf, dumpOf } from "../fixtures/backend.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

const user = (content: string) => ({ role: "user", content });
const assistant = (content: string) => ({ role: "assistant", content });

async function chat() {
  const { fp, path } = dbs.open();
  const s = await fp.createSession({ userId: "alice" });
  const [q1, a1, q2] = await s.append([user("q1"), assistant("a1"), user("q2")]);
  return { fp, path, s, q1: q1!, a1: a1!, q2: q2! };
}

const contents = async (s: Awaited<ReturnType<typeof chat>>["s"], branchId?: string) =>
  (await s.history(branchId ? { branchId } : {})).map((m) => m.content);
const current = async (s: Awaited<ReturnType<typeof chat>>["s"]) => (await s.info()).currentBranchId;

describe("append after a message", () => {
  it("while it is the current lineage's last message: on the current branch, as a plain append", async () => {
    const { s, q2 } = await chat();
    await s.setState({ thinking: true });
    const [a2] = await s.append(assistant("a2"), { after: q2.id });
    expect(a2!.branchId).toBe(q2.branchId);
    expect(a2!.position).toBe(q2.position + 2);
    expect(await contents(s)).toEqual(["q1", "a1", "q2", "a2"]);
  });

  it("after an edit of the question while the answer streamed: on the question's own branch; the edit stays current", async () => {
    const { s, q2, path } = await chat();
    const edited = await s.edit(q2.id, { content: "q2, edited" });
    const branches = (await s.branches()).length;
    const [a2] = await s.append(assistant("a2"), { after: q2.id });
    expect(a2!.branchId).toBe(q2.branchId);
    expect(await current(s)).toBe(edited.branch.id);
    expect(await contents(s)).toEqual(["q1", "a1", "q2, edited"]);
    expect(await contents(s, q2.branchId)).toEqual(["q1", "a1", "q2", "a2"]);
    expect((await s.branches()).length).toBe(branches);
    // Nothing moved: no event, no move to undo (the edit is still the last move).
    expect((await s.undo()).branch.id).toBe(q2.branchId);
    expect((await countRowsOf(path)).requests ?? 0).toBe(0);
  });

  it("when its branch went on past it: a new branch forked right after it, the answer a version of what follows there", async () => {
    const { s, q1, a1 } = await chat();
    const root = await current(s);
    const [a1b] = await s.append(assistant("a1, again"), { after: q1.id });
    expect(a1b!.branchId).not.toBe(root);
    expect(await current(s)).toBe(root);
    expect(await contents(s, a1b!.branchId)).toEqual(["q1", "a1, again"]);
    const versions = await s.versions(a1.id);
    expect(versions.count).toBe(2);
    expect(versions.versions.map((v) => v.message.id)).toEqual([a1.id, a1b!.id]);
    const made = (await s.branches()).find((b) => b.id === a1b!.branchId)!;
    expect(made).toMatchObject({ parentId: root, forkPosition: q1.position, current: false });
    // A second answer to it, while that branch still ends at it... it does not: another version again.
    const [a1c] = await s.append(assistant("a1, third"), { after: q1.id });
    expect(new Set([a1b!.branchId, a1c!.branchId, root]).size).toBe(3);
    expect((await s.versions(a1.id)).count).toBe(3);
  });

  it("on a branch that ends at it (forked right after it), after the answer's own tool calls there", async () => {
    const { s, fp } = await chat();
    const root = await current(s);
    const asked = await s.checkpoint({ name: "asked" });
    const [q2] = (await s.history()).slice(-1);
    await s.append(assistant("a2 (first)"));
    // A regenerate in another tab: a branch forked right after the question, where the new answer's loop calls a tool...
    const other = await fp.getSession(s.id, { userId: "alice" });
    const forked = (await other.rollback(asked.id)).branch.id;
    const lookup = await other.recordToolCall({ tool: "lookup", args: {}, result: 1 });
    // ...then the user went back to the first answer while the new one streamed.
    await s.switchBranch(root);
    const [a2] = await s.append(assistant("a2 (second)"), { after: q2!.id });
    expect(a2!.branchId).toBe(forked);
    expect(a2!.position).toBe(lookup.position + 1);
    expect(await current(s)).toBe(root);
    expect(await contents(s, forked)).toEqual(["q1", "a1", "q2", "a2 (second)"]);
    expect(await contents(s)).toEqual(["q1", "a1", "q2", "a2 (first)"]);
  });

  it("turn: the messages and the checkpoint land together on the question's branch", async () => {
    const { s, q2 } = await chat();
    const edited = await s.edit(q2.id, { content: "q2, edited" });
    const { messages, checkpoint } = await s.turn(assistant("a2"), { name: "answered" }, { after: q2.id });
    expect(messages[0]!.branchId).toBe(q2.branchId);
    expect(checkpoint).toMatchObject({ branchId: q2.branchId, position: messages[0]!.position, name: "answered" });
    expect(await current(s)).toBe(edited.branch.id);
    expect((await s.restore(checkpoint.id)).history.map((m) => m.content)).toEqual(["q1", "a1", "q2", "a2"]);
  });

  it("with a requestId: a retry answers with the first landing; `after` is one of the call's arguments", async () => {
    const { s, q1, q2, path } = await chat();
    await s.edit(q2.id, { content: "edited" });
    const first = await s.append(assistant("a2"), { after: q2.id, requestId: "r" });
    const dump = await dumpOf(path);
    expect(await s.append(assistant("a2"), { after: q2.id, requestId: "r" })).toEqual(first);
    expect(await dumpOf(path)).toEqual(dump);
    const reuse = await rejectionOf(s.append(assistant("a2"), { after: q1.id, requestId: "r" }));
    expect(reuse.code).toBe("REQUEST_ID_REUSED");
    expect((await rejectionOf(s.append(assistant("a2"), { requestId: "r" }))).code).toBe("REQUEST_ID_REUSED");
  });

  it("a tool call, a state change or a checkpoint is no message to follow, even at the head: NotFoundError, nothing written", async () => {
    const { s, path } = await chat();
    const call = await s.recordToolCall({ tool: "lookup", args: {}, result: 1 });
    const checkpoint = await s.checkpoint({ name: "here" });
    let dump = await dumpOf(path);
    for (const after of [call.id, checkpoint.id, checkpoint.branchId, s.id]) {
      for (const write of [() => s.append(assistant("x"), { after }), () => s.turn(assistant("x"), { name: "t" }, { after })]) {
        const error = await rejectionOf(write);
        expect(error, after).toBeInstanceOf(NotFoundError);
      }
      expect(await dumpOf(path)).toEqual(dump);
    }
    await s.setState({ thinking: true });
    const [state] = (await s.timeline()).items;
    expect(state!.kind).toBe("state");
    dump = await dumpOf(path);
    expect(await rejectionOf(s.append(assistant("x"), { after: state!.id }))).toBeInstanceOf(NotFoundError);
    expect(await dumpOf(path)).toEqual(dump);
  });

  it("an unknown message, or another session's, is NotFoundError and writes nothing; ifAt still guards the current branch", async () => {
    const { fp, s, q2, path } = await chat();
    const other = await fp.createSession({ userId: "alice" });
    const [theirs] = await other.append(user("elsewhere"));
    const dump = await dumpOf(path);
    for (const after of ["msg_nope", theirs!.id]) {
      const error = await rejectionOf(s.append(assistant("x"), { after }));
      expect(error).toBeInstanceOf(NotFoundError);
    }
    const stale = await rejectionOf(s.append(assistant("x"), { after: q2.id, ifAt: { branchId: "br_other" } }));
    expect(stale).toBeInstanceOf(ConflictError);
    expect(stale.code).toBe("SESSION_MOVED");
    expect((await rejectionOf(s.append(assistant("x"), { after: "" }))).code).toBe("VALIDATION_ERROR");
    expect(await dumpOf(path)).toEqual(dump);
  });
});
