// invoke / recordToolCall with `after: messageId`: an agent loop's calls follow its question on its own lineage, as
// messages appended `after` it do. Off the current branch (another tab appended, or moved), the call's effect is held
// in the world: a later switch to its branch keeps it (never run again) and any other move undoes it (unless it restores
// files taken while it was held, which hold it), each effect once.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { NotFoundError, ValidationError } from "../../src/index.js";
import { dumpOf } from "../fixtures/backend.js";
import { appendLineTool, tempDir, type ToolCallRecord } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

async function chat() {
  const calls: ToolCallRecord[] = [];
  const { fp, path: db } = dbs.open({ tools: [appendLineTool({ calls })] });
  const file = path.join(tempDir(), "notes.txt");
  const s = await fp.createSession({ userId: "alice" });
  const [question] = await s.append({ role: "user", content: "take a note" });
  const ops = () => calls.map((c) => `${c.op}${c.replay ? " (replay)" : ""}`);
  const lines = () => (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "");
  return { fp, db, s, file, question: question!, ops, lines };
}

describe("invoke after a message", () => {
  it("while the question is the lineage's last message (calls between do not count): on the current branch", async () => {
    const { s, file, question, lines } = await chat();
    const root = (await s.info()).currentBranchId;
    await s.invoke("append_line", { path: file, line: "one" }, { after: question.id });
    await s.setState({ step: 2 });
    await s.invoke("append_line", { path: file, line: "two" }, { after: question.id });
    expect((await s.toolTrack()).map((t) => t.branchId)).toEqual([root, root]);
    expect((await s.branches()).length).toBe(1);
    expect(lines()).toBe("one\ntwo\n");
  });

  it("once another tab appended: on a new branch forked right after the question, with the answer; the tab's stays", async () => {
    const { s, file, question, ops, lines } = await chat();
    const root = (await s.info()).currentBranchId;
    await s.append({ role: "user", content: "and another thing" }); // the other tab
    await s.invoke("append_line", { path: file, line: "one" }, { after: question.id });
    const second = await s.recordToolCall(
      { tool: "append_line", args: { path: file, line: "two" }, result: { sizeBefore: 4 } },
      { after: question.id },
    );
    fs.appendFileSync(file, "two\n"); // what the recorded call did
    const [answer] = await s.append({ role: "assistant", content: "noted" }, { after: question.id });
    const fork = answer!.branchId;
    expect(fork).not.toBe(root);
    expect(second.branchId).toBe(fork);
    expect((await s.toolTrack({ branchId: fork })).map((t) => t.tool)).toEqual(["append_line", "append_line"]);
    expect((await s.history({ branchId: fork })).map((m) => m.content)).toEqual(["take a note", "noted"]);
    expect((await s.branches()).find((b) => b.id === fork)).toMatchObject({ parentId: root, forkPosition: question.position });
    expect((await s.info()).currentBranchId).toBe(root);
    expect(await s.toolTrack()).toEqual([]);
    expect([lines(), ops()]).toEqual(["one\ntwo\n", ["run"]]);

    // The fork's calls are applied already: switching there runs nothing; back to the tab's conversation undoes both.
    const plan = await s.plan({ branchId: fork });
    expect([plan.undone, plan.replayed]).toEqual([[], []]);
    await s.switchBranch(fork);
    expect([lines(), ops()]).toEqual(["one\ntwo\n", ["run"]]);
    await s.switchBranch(root);
    expect([lines(), ops()]).toEqual(["", ["run", "undo", "undo"]]);
    await s.switchBranch(fork);
    expect([lines(), ops()]).toEqual(["one\ntwo\n", ["run", "undo", "undo", "run (replay)", "run (replay)"]]);
  });

  it("the loop's calls made before the other tab appended stay in the answer's lineage: its branch runs nothing again", async () => {
    const { s, file, question, ops, lines } = await chat();
    await s.invoke("append_line", { path: file, line: "P" }, { after: question.id });
    await s.append({ role: "user", content: "another tab" });
    await s.invoke("append_line", { path: file, line: "X" }, { after: question.id });
    const [answer] = await s.append({ role: "assistant", content: "noted P and X" }, { after: question.id });
    await s.switchBranch(answer!.branchId);
    expect((await s.toolTrack()).map((t) => (t.args as { line: string }).line)).toEqual(["P", "X"]);
    expect((await s.history()).map((m) => m.content)).toEqual(["take a note", "noted P and X"]);
    expect(ops()).toEqual(["run", "run"]);
    expect(lines()).toBe("P\nX\n");
    // The other tab's conversation holds P too (made before it wrote), and the answer is a version of what follows.
    expect((await s.versions(answer!.id)).count).toBe(2);
  });

  it("after a regenerate, the answer's branch holds the new loop's calls, not the rejected answer's", async () => {
    const { s, file, question, ops, lines } = await chat();
    const asked = await s.checkpoint({ name: "asked" });
    await s.invoke("append_line", { path: file, line: "old" }, { after: question.id });
    await s.append({ role: "assistant", content: "first answer" }, { after: question.id });
    // A regenerate: a branch forked right after the question (the first answer's call undone), the new loop's call on it.
    const regenerated = await s.rollback(asked.id);
    await s.invoke("append_line", { path: file, line: "new" }, { after: question.id });
    await s.append({ role: "user", content: "another tab" });
    const [answer] = await s.append({ role: "assistant", content: "second answer" }, { after: question.id });
    expect((await s.info()).currentBranchId).toBe(regenerated.branch.id);
    await s.switchBranch(answer!.branchId);
    expect((await s.toolTrack()).map((t) => [(t.args as { line: string }).line, t.applied])).toEqual([["new", true]]);
    expect(ops()).toEqual(["run", "undo", "run"]);
    expect(lines()).toBe("new\n");
  });

  it("a move away while the call sits off the current branch undoes it once; a rollback there replays nothing twice", async () => {
    const { s, file, question, ops, lines } = await chat();
    const start = await s.checkpoint({ name: "start" });
    await s.append({ role: "user", content: "and another thing" });
    await s.invoke("append_line", { path: file, line: "one" }, { after: question.id });
    const back = await s.rollback(start.id);
    expect([lines(), ops()]).toEqual(["", ["run", "undo"]]);
    await s.switchBranch(back.branch.parentId!);
    // The tab's own branch has no call: nothing comes back there.
    expect([lines(), ops()]).toEqual(["", ["run", "undo"]]);
  });

  it("after a rollback of the question's branch: on the question's own lineage, never the rollback's", async () => {
    const { s, file, question, lines } = await chat();
    const start = (await s.branches())[0]!;
    const cp = await s.checkpoint({ name: "before" });
    await s.append({ role: "assistant", content: "first answer" });
    const [q2] = await s.append({ role: "user", content: "second question" });
    const moved = await s.rollback(cp.id);
    const call = await s.recordToolCall({ tool: "lookup", args: {}, result: 1 }, { after: q2!.id });
    expect(call.branchId).toBe(start.id);
    expect((await s.info()).currentBranchId).toBe(moved.branch.id);
    expect(await s.toolTrack()).toEqual([]);
    await s.invoke("append_line", { path: file, line: "one" }, { after: question.id });
    expect((await s.toolTrack()).map((t) => t.tool)).toEqual(["append_line"]); // the question ends the rollback's lineage
    expect(lines()).toBe("one\n");
  });

  it("with a requestId: a retry runs nothing and answers as the first; `after` is one of the call's arguments", async () => {
    const { s, db, file, question, ops } = await chat();
    await s.append({ role: "user", content: "and another thing" });
    const first = await s.invoke("append_line", { path: file, line: "one" }, { after: question.id, requestId: "r" });
    const dump = await dumpOf(db);
    expect(await s.invoke("append_line", { path: file, line: "one" }, { after: question.id, requestId: "r" })).toEqual(first);
    expect(await dumpOf(db)).toEqual(dump);
    expect(ops()).toEqual(["run"]);
    for (const options of [{ requestId: "r" }, { requestId: "r", after: (await s.history()).at(-1)!.id }])
      expect((await rejectionOf(s.invoke("append_line", { path: file, line: "one" }, options))).code).toBe("REQUEST_ID_REUSED");
    const recorded = { tool: "lookup", args: {}, result: 1 };
    const once = await s.recordToolCall(recorded, { after: question.id, requestId: "q" });
    expect(await s.recordToolCall(recorded, { after: question.id, requestId: "q" })).toEqual(once);
    expect((await rejectionOf(s.recordToolCall(recorded, { requestId: "q" }))).code).toBe("REQUEST_ID_REUSED");
    expect(await dumpOf(db)).not.toEqual(dump);
    expect(ops()).toEqual(["run"]);
  });

  it("a bad `after` is refused before anything is written or run: ValidationError, NotFoundError", async () => {
    const { fp, s, db, file, ops } = await chat();
    const call = await s.recordToolCall({ tool: "lookup", args: {}, result: 1 });
    const elsewhere = await fp.createSession({ userId: "alice" });
    const [foreign] = await elsewhere.append({ role: "user", content: "another chat" });
    const dump = await dumpOf(db);
    const args = { path: file, line: "one" };
    const recorded = { tool: "lookup", args: {}, result: 1 };
    for (const after of ["", 7, null, "  "] as unknown as string[]) {
      expect(await rejectionOf(s.invoke("append_line", args, { after })), String(after)).toBeInstanceOf(ValidationError);
      expect(await rejectionOf(s.recordToolCall(recorded, { after })), String(after)).toBeInstanceOf(ValidationError);
    }
    for (const after of ["msg_unknown", foreign!.id, call.id, s.id]) {
      expect(await rejectionOf(s.invoke("append_line", args, { after })), after).toBeInstanceOf(NotFoundError);
      expect(await rejectionOf(s.recordToolCall(recorded, { after, requestId: "x" })), after).toBeInstanceOf(NotFoundError);
    }
    expect(await dumpOf(db)).toEqual(dump);
    expect([ops(), fs.existsSync(file)]).toEqual([[], false]);
  });

  it('with a workspace and scope "both": each move gives the off-branch call\'s effect once, as the files it restores hold it', async () => {
    const { fp } = dbs.open({ tools: [appendLineTool()] });
    const ws = tempDir();
    const log = path.join(ws, "log.txt");
    fs.writeFileSync(log, "");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    await s.checkpoint({ name: "start" });
    const [question] = await s.append({ role: "user", content: "q" });
    const root = (await s.info()).currentBranchId;
    await s.append({ role: "user", content: "the other tab's" });
    await s.invoke("append_line", { path: log, line: "a" }, { after: question!.id });
    const [answer] = await s.append({ role: "assistant", content: "done" }, { after: question!.id });
    const fork = answer!.branchId;
    // Taken while the call is held: these files hold its effect, so a move restoring them keeps it (never twice).
    const held = await s.checkpoint({ name: "the other tab's, with the call held" });
    const read = () => fs.readFileSync(log, "utf8");

    await s.switchBranch(fork, { scope: "both" });
    expect([read(), (await s.toolTrack()).map((t) => t.applied)]).toEqual(["a\n", [true]]);
    await s.switchBranch(root, { scope: "both" });
    expect(read()).toBe("a\n");
    await s.switchBranch(fork, { scope: "both" });
    expect(read()).toBe("a\n");
    await s.switchBranch(root);
    expect(read()).toBe("");
    await s.switchBranch(fork);
    expect(read()).toBe("a\n");
    await s.rollback(held.id, { scope: "both" });
    expect(read()).toBe("a\n");
    await s.switchBranch(fork, { scope: "both" });
    expect([read(), (await s.toolTrack()).map((t) => t.applied)]).toEqual(["a\n", [true]]);
  });
});
