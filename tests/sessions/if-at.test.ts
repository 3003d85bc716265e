// ifAt on every write and move: the call runs only while the session's current branch (and head position) is where
// the caller saw it; otherwise ConflictError SESSION_MOVED, and nothing is written.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConflictError, ValidationError, type SessionHandle } from "../../src/index.js";
import { dumpOf } from "../fixtures/backend.js";
import { tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** A session with a question, a checkpoint, an answer, a second branch made by an edit, and a tool call. */
async function tree() {
  const dir = tempDir();
  const { fp, path: db } = dbs.open({ tools: [writeFileTool()] });
  const s = await fp.createSession({ userId: "alice" });
  const [question] = await s.append({ role: "user", content: "plan a trip" });
  const cp = await s.checkpoint({ name: "asked" });
  const [answer] = await s.append({ role: "assistant", content: "Lisbon" });
  await s.invoke("write_file", { path: path.join(dir, "a.txt"), text: "a" });
  const root = (await s.info()).currentBranchId;
  const edited = await s.edit(question!.id, { content: "plan a cheap trip" });
  await s.switchBranch(root);
  const head = (await s.branches()).find((b) => b.current)!.head;
  return { fp, db, s, dir, question: question!, answer: answer!, cp, root, other: edited.branch.id, head };
}

type Tree = Awaited<ReturnType<typeof tree>>;

/** Every write and move, each called with `ifAt` (and nothing else that could refuse it). */
const calls: [string, (t: Tree, ifAt: { branchId: string; head?: number }) => Promise<unknown>][] = [
  ["append", (t, ifAt) => t.s.append({ role: "user", content: "more" }, { ifAt })],
  ["turn", (t, ifAt) => t.s.turn({ role: "user", content: "more" }, { name: "t" }, { ifAt })],
  ["setState", (t, ifAt) => t.s.setState({ x: 1 }, { ifAt })],
  ["checkpoint", (t, ifAt) => t.s.checkpoint({ name: "c", ifAt })],
  ["invoke", (t, ifAt) => t.s.invoke("write_file", { path: path.join(t.dir, "b.txt"), text: "b" }, { ifAt })],
  ["recordToolCall", (t, ifAt) => t.s.recordToolCall({ tool: "write_file", args: {}, result: null }, { ifAt })],
  ["update", (t, ifAt) => t.s.update({ title: "new" }, { ifAt })],
  ["deleteCheckpoint", (t, ifAt) => t.s.deleteCheckpoint(t.cp.id, { ifAt })],
  ["rollback", (t, ifAt) => t.s.rollback(t.cp.id, { ifAt })],
  ["switchBranch", (t, ifAt) => t.s.switchBranch(t.other, { ifAt })],
  ["undo", (t, ifAt) => t.s.undo({ ifAt })],
  ["redo", (t, ifAt) => t.s.redo({ ifAt })],
  ["edit", (t, ifAt) => t.s.edit(t.question.id, { content: "again" }, { ifAt })],
  ["regenerate", (t, ifAt) => t.s.regenerate(t.answer.id, { content: "Porto" }, { ifAt })],
];

async function movedError(call: Promise<unknown>): Promise<void> {
  const error = await rejectionOf(call);
  expect(error).toBeInstanceOf(ConflictError);
  expect(error.code).toBe("SESSION_MOVED");
}

describe("ifAt", () => {
  for (const [verb, call] of calls) {
    it(`${verb}: refused with SESSION_MOVED, nothing written, when the session is on another branch or head`, async () => {
      const t = await tree();
      // Something to redo: the switch back to the root is undone first.
      if (verb === "redo") await t.s.undo();
      const dump = await dumpOf(t.db);
      const here = (await t.s.branches()).find((b) => b.current)!;
      await movedError(call(t, { branchId: here.id === t.root ? t.other : t.root }));
      expect(await dumpOf(t.db)).toEqual(dump);
      await movedError(call(t, { branchId: here.id, head: here.head + 1 }));
      expect(await dumpOf(t.db)).toEqual(dump);
      // Where the caller saw it: the call goes ahead.
      const now = (await t.s.branches()).find((b) => b.current)!;
      await call(t, { branchId: now.id, head: now.head });
    });
  }

  it("a tab that saw an older position is refused after another tab moved the session", async () => {
    const t = await tree();
    const seen = await t.s.info();
    const head = (await t.s.branches()).find((b) => b.current)!.head;
    const otherTab: SessionHandle = await t.fp.getSession(t.s.id, { userId: "alice" });
    await otherTab.rollback(t.cp.id);
    await movedError(t.s.append({ role: "user", content: "from the stale tab" }, { ifAt: { branchId: seen.currentBranchId, head } }));
    // The branch alone is not enough either once something was appended on it.
    const now = await t.s.info();
    await otherTab.append({ role: "user", content: "other tab" });
    await movedError(t.s.append({ role: "user", content: "stale" }, { ifAt: { branchId: now.currentBranchId, head: head } }));
    await t.s.append({ role: "user", content: "fine" }, { ifAt: { branchId: now.currentBranchId } });
  });

  it("with a requestId: a retry after the first call moved the session answers as the first call did", async () => {
    const t = await tree();
    const ifAt = { branchId: t.root, head: t.head };
    const rolled = await t.s.rollback(t.cp.id, { ifAt, requestId: "rb" });
    expect(await t.s.rollback(t.cp.id, { ifAt, requestId: "rb" })).toEqual(rolled);
    const [m] = await t.s.append({ role: "user", content: "x" }, { ifAt: { branchId: rolled.branch.id }, requestId: "ap" });
    expect(await t.s.append({ role: "user", content: "x" }, { ifAt: { branchId: t.root }, requestId: "ap" })).toEqual([m]);
  });

  it("is validated: a branch id and a non-negative integer head, nothing else", async () => {
    const t = await tree();
    const dump = await dumpOf(t.db);
    for (const ifAt of [
      {},
      { branchId: "" },
      { branchId: t.root, head: -1 },
      { branchId: t.root, head: 1.5 },
      { branchId: t.root, at: 1 },
      "x",
    ]) {
      const error = await rejectionOf(t.s.append({ role: "user", content: "no" }, { ifAt: ifAt as never }));
      expect(error, JSON.stringify(ifAt)).toBeInstanceOf(ValidationError);
      expect((await rejectionOf(t.s.rollback(t.cp.id, { ifAt: ifAt as never }))).code).toBe("VALIDATION_ERROR");
    }
    expect(await dumpOf(t.db)).toEqual(dump);
  });
});
