// s.undo() / s.redo(): the session's own moves, kept in the database, taken back and done again like any move.
import { describe, expect, it } from "vitest";
import { defineTool, type MoveResult } from "../../src/index.js";
import { tempDatabases } from "../helpers.js";
import { countRowsOf, onPostgres, sqlOn } from "../fixtures/backend.js";

const dbs = tempDatabases();

/** A world of keys: `put` sets one, its undo removes it. */
function world() {
  const keys = new Map<string, string>();
  const put = defineTool({
    name: "put",
    run: async ({ key, value }: { key: string; value: string }) => {
      keys.set(key, value);
      return { key };
    },
    undo: async ({ args }) => void keys.delete(args.key),
  });
  return { keys, put };
}

async function chat(contents: string[], options: Parameters<typeof dbs.open>[0] = {}) {
  const { fp, path } = dbs.open(options);
  const s = await fp.createSession({ userId: "alice" });
  const root = (await s.info()).currentBranchId;
  const msgs = await s.append(contents.map((content, i) => ({ role: i % 2 === 0 ? "user" : "assistant", content })));
  return { fp, path, s, root, msgs };
}

const contents = async (s: { history(): Promise<{ content: unknown }[]> }) => (await s.history()).map((m) => m.content);

describe("undo and redo", () => {
  it("with no move to take back (or to do again) is a ConflictError, with nothing written", async () => {
    const { path, s } = await chat(["1"]);
    const rows = await countRowsOf(path);
    await expect(s.undo()).rejects.toMatchObject({ name: "ConflictError", code: "NOTHING_TO_UNDO" });
    await expect(s.redo()).rejects.toMatchObject({ name: "ConflictError", code: "NOTHING_TO_REDO" });
    expect(await countRowsOf(path)).toEqual(rows);
  });

  it("undo goes back to the branch and head a rollback left; redo returns to the rollback's branch", async () => {
    const { s, root } = await chat(["1", "2"]);
    const cp = await s.checkpoint();
    await s.append({ role: "user", content: "3" });
    const fork = await s.rollback(cp.id);

    const back = await s.undo();
    expect(back).toEqual({
      branch: expect.objectContaining({ id: root, head: 3, current: true }),
      undone: [],
      replayed: [],
      skipped: [],
      unregistered: [],
      failed: [],
      unknown: [],
    });
    expect(await contents(s)).toEqual(["1", "2", "3"]);
    await expect(s.undo()).rejects.toMatchObject({ code: "NOTHING_TO_UNDO" });

    const again = await s.redo();
    expect(again.branch).toMatchObject({ id: fork.branch.id, head: 2, current: true });
    expect(await contents(s)).toEqual(["1", "2"]);
    expect((await s.branches()).length).toBe(2); // redo re-enters the branch; it forks nothing
    await expect(s.redo()).rejects.toMatchObject({ code: "NOTHING_TO_REDO" });
  });

  it("walks back through rollback, edit and switch, newest first, and forward again", async () => {
    const { s, root, msgs } = await chat(["1", "2", "3"]);
    const cp = await s.checkpoint();
    await s.append({ role: "assistant", content: "4" });
    const rolled = await s.rollback(cp.id); // root → rolled
    const edited = await s.edit(msgs[1]!.id, { role: "assistant", content: "2'" }); // rolled → edited
    await s.switchBranch(root); // edited → root

    expect((await s.undo()).branch.id).toBe(edited.branch.id);
    expect((await s.undo()).branch.id).toBe(rolled.branch.id);
    expect((await s.undo()).branch.id).toBe(root);
    await expect(s.undo()).rejects.toMatchObject({ code: "NOTHING_TO_UNDO" });
    expect((await s.redo()).branch.id).toBe(rolled.branch.id);
    expect((await s.redo()).branch.id).toBe(edited.branch.id);
    expect(await contents(s)).toEqual(["1", "2'"]);
    expect((await s.redo()).branch.id).toBe(root);
    await expect(s.redo()).rejects.toMatchObject({ code: "NOTHING_TO_REDO" });
  });

  it("a new move clears what could be redone; appending does not", async () => {
    const { s, root } = await chat(["1", "2"]);
    const cp = await s.checkpoint();
    await s.append({ role: "user", content: "3" });
    const fork = await s.rollback(cp.id);
    await s.undo();
    await s.append({ role: "user", content: "4" }); // on the root: not a move
    expect((await s.redo()).branch.id).toBe(fork.branch.id);
    await s.undo();
    await s.switchBranch(fork.branch.id); // a new move
    await expect(s.redo()).rejects.toMatchObject({ code: "NOTHING_TO_REDO" });
    expect((await s.undo()).branch.id).toBe(root);
  });

  it("back to a branch appended to since means its head, as switchBranch does", async () => {
    const { s, root } = await chat(["1", "2"]);
    const cp = await s.checkpoint();
    await s.append({ role: "user", content: "3" });
    const fork = await s.rollback(cp.id); // left the root at head 3
    await s.append({ role: "user", content: "x" });
    await s.switchBranch(root); // left the fork at head 3
    await s.append({ role: "user", content: "4" });

    expect((await s.undo()).branch).toMatchObject({ id: fork.branch.id, head: 3 });
    expect(await contents(s)).toEqual(["1", "2", "x"]);
    expect((await s.undo()).branch).toMatchObject({ id: root, head: 4 });
    expect(await contents(s)).toEqual(["1", "2", "3", "4"]);
  });

  it("moves the world: a tool effect the rollback undid is replayed by undo and undone again by redo", async () => {
    const w = world();
    const { fp, s } = await chat(["1"], { tools: [w.put] });
    const before = await s.checkpoint();
    await s.invoke("put", { key: "a", value: "1" });
    await s.rollback(before.id);
    expect(w.keys.has("a")).toBe(false);

    const undone: MoveResult[] = [];
    const redone: MoveResult[] = [];
    fp.on("undoMove", (r) => void undone.push(r));
    fp.on("redoMove", (r) => void redone.push(r));
    const back = await s.undo();
    expect(back.replayed.map((t) => t.tool)).toEqual(["put"]);
    expect(back.undone).toEqual([]);
    expect(w.keys.get("a")).toBe("1");
    const forward = await s.redo();
    expect(forward.undone.map((t) => t.tool)).toEqual(["put"]);
    expect(w.keys.has("a")).toBe(false);
    expect(undone).toEqual([back]);
    expect(redone).toEqual([forward]);
  });

  it("an undo whose tool undo throws stops as a move does (ToolUndoError); the move stands until an undo succeeds", async () => {
    const keys = new Map<string, string>();
    let refuse = true;
    const put = defineTool({
      name: "put",
      run: async ({ key, value }: { key: string; value: string }) => void keys.set(key, value),
      undo: async ({ args }) => {
        if (refuse) throw new Error("not now");
        keys.delete(args.key);
      },
    });
    const { s, root } = await chat(["1"], { tools: [put] });
    const cp = await s.checkpoint();
    await s.append({ role: "user", content: "2" });
    const fork = await s.rollback(cp.id);
    await s.invoke("put", { key: "b", value: "on the fork" });

    await expect(s.undo()).rejects.toMatchObject({ name: "ToolUndoError", code: "UNDO_FAILED" });
    expect((await s.info()).currentBranchId).toBe(fork.branch.id);
    expect(keys.has("b")).toBe(true);
    await expect(s.redo()).rejects.toMatchObject({ code: "NOTHING_TO_REDO" });

    refuse = false;
    const back = await s.undo();
    expect(back.branch.id).toBe(root);
    expect(back.undone.map((t) => t.tool)).toEqual(["put"]);
    expect(keys.has("b")).toBe(false);
    expect((await s.redo()).replayed.map((t) => t.tool)).toEqual(["put"]);
    expect(keys.get("b")).toBe("on the fork");
  });

  it("shows in the timeline", async () => {
    const { s, root } = await chat(["1"]);
    const cp = await s.checkpoint();
    await s.append({ role: "user", content: "2" });
    const fork = await s.rollback(cp.id);
    await s.undo();
    await s.redo();
    const items = (await s.timeline()).items.filter((i) => i.kind === "undo" || i.kind === "redo" || i.kind === "switch");
    expect(items.map((i) => [i.kind, i.branchId])).toEqual([
      ["redo", fork.branch.id],
      ["undo", root],
    ]);
    expect(items[1]!.summary).toContain("undid rollback");
  });

  it("is kept in the database: another process (here, another handle) undoes after a reopen", async () => {
    const { fp, path, s, root } = await chat(["1"]);
    const cp = await s.checkpoint();
    await s.append({ role: "user", content: "2" });
    await s.rollback(cp.id);
    await fp.close();

    const reopened = dbs.open({ path }).fp;
    const again = await reopened.getSession(s.id, { userId: "alice" });
    expect((await again.undo()).branch.id).toBe(root);
    await expect(again.undo()).rejects.toMatchObject({ code: "NOTHING_TO_UNDO" });
  });

  it("two handles undoing at once take back two different moves, never the same one twice", async () => {
    const { path, s, root } = await chat(["1", "2"]);
    const cp = await s.checkpoint();
    await s.append({ role: "user", content: "3" });
    const fork = await s.rollback(cp.id);
    await s.switchBranch(root);
    await s.switchBranch(fork.branch.id);
    const other = dbs.open({ path }).fp;
    const s2 = await other.getSession(s.id, { userId: "alice" });

    // Three moves stand; three undos at once from two handles take back each once.
    const results = await Promise.allSettled([s.undo(), s2.undo(), s2.undo()]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "fulfilled"]);
    expect((await s.info()).currentBranchId).toBe(root);
    await expect(s.undo()).rejects.toMatchObject({ code: "NOTHING_TO_UNDO" });

    // One move stands; two undos at once: one does it, the other finds nothing left.
    await s.redo();
    await s.redo();
    await s.redo();
    await s.undo();
    await s.undo();
    const race = await Promise.allSettled([s.undo(), s2.undo()]);
    expect(race.filter((r) => r.status === "fulfilled").length).toBe(1);
    const refused = race.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({ code: "NOTHING_TO_UNDO" });
    expect((await s.info()).currentBranchId).toBe(root);
  });

  it("takes move options; bad ones are refused with nothing written", async () => {
    const { path, s } = await chat(["1"]);
    const cp = await s.checkpoint();
    await s.append({ role: "user", content: "2" });
    await s.rollback(cp.id);
    const rows = await countRowsOf(path);
    await expect(s.undo({ onUndoError: "later" } as never)).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
    await expect(s.undo({ scope: "files" })).rejects.toMatchObject({ code: "VALIDATION_ERROR", field: "scope" });
    expect(await countRowsOf(path)).toEqual(rows);
    expect((await s.undo({ onUndoError: "continue", refuseIrreversible: true })).branch.head).toBe(2);
  });

  it("an idempotent rollback (clicked twice) is not a move of the history", async () => {
    const { s, root } = await chat(["1"]);
    const cp = await s.checkpoint();
    await s.append({ role: "user", content: "2" });
    const fork = await s.rollback(cp.id);
    expect((await s.rollback(cp.id)).branch.id).toBe(fork.branch.id);
    expect((await s.undo()).branch.id).toBe(root);
    await expect(s.undo()).rejects.toMatchObject({ code: "NOTHING_TO_UNDO" });
  });

  it("records a rollback and an edit on the branch each makes (no row of their own), a switch in a row, forgotten once undone", async () => {
    const { path, s, root, msgs } = await chat(["q", "a"]);
    const historyRows = async () =>
      Number((await sqlOn<{ n: number }>(path, `SELECT count(*) AS n FROM move_history WHERE session_id = $1`, [s.id]))[0]!.n);
    const cp = await s.checkpoint();
    await s.append({ role: "user", content: "more" });
    const rolled = (await s.rollback(cp.id)).branch.id;
    const edited = (await s.edit(msgs[0]!.id, { content: "q2" })).branch.id;
    expect(await historyRows()).toBe(0);
    await s.switchBranch(root);
    expect(await historyRows()).toBe(1);
    // The stack holds all three, newest first, whichever way each is recorded; redo walks them back in order.
    expect((await s.undo()).branch.id).toBe(edited);
    expect((await s.undo()).branch.id).toBe(rolled);
    expect((await s.undo()).branch.id).toBe(root);
    await expect(s.undo()).rejects.toMatchObject({ code: "NOTHING_TO_UNDO" });
    expect((await s.redo()).branch.id).toBe(rolled);
    expect((await s.redo()).branch.id).toBe(edited);
    expect((await s.undo()).branch.id).toBe(rolled);
    // A new move leaves nothing to redo: the undone edit stays with its branch, and the undone switch's row goes.
    expect(await historyRows()).toBe(1);
    await s.switchBranch(edited);
    expect(await historyRows()).toBe(1);
    await expect(s.redo()).rejects.toMatchObject({ code: "NOTHING_TO_REDO" });
    expect((await s.undo()).branch.id).toBe(rolled);
    expect((await s.undo()).branch.id).toBe(root);
    await expect(s.undo()).rejects.toMatchObject({ code: "NOTHING_TO_UNDO" });
  });

  it("a rollback or edit (a move that makes a branch) forgets the undone switch's row too", async () => {
    const { path, s, root, msgs } = await chat(["q", "a"]);
    const historyRows = async () =>
      Number((await sqlOn<{ n: number }>(path, `SELECT count(*) AS n FROM move_history WHERE session_id = $1`, [s.id]))[0]!.n);
    const cp = await s.checkpoint();
    const edited = (await s.edit(msgs[0]!.id, { content: "q2" })).branch.id;
    await s.switchBranch(root);
    await s.undo();
    expect(await historyRows()).toBe(1);
    const rolled = (await s.rollback(cp.id)).branch.id;
    expect(await historyRows()).toBe(0);
    await expect(s.redo()).rejects.toMatchObject({ code: "NOTHING_TO_REDO" });
    expect((await s.undo()).branch.id).toBe(edited);
    expect((await s.redo()).branch.id).toBe(rolled);
  });
});

describe("undo after a move that found the session at its target", () => {
  it("a rollback to the head's checkpoint, after writing on: undo takes back that rollback (staying), not the older move", async () => {
    const { s, root } = await chat(["1", "2"]);
    const cp = await s.checkpoint();
    await s.append({ role: "user", content: "3" });
    const fork = await s.rollback(cp.id); // root → fork
    await s.append({ role: "user", content: "x" });
    const here = await s.checkpoint({ name: "here" });
    expect((await s.rollback(here.id)).branch).toMatchObject({ id: fork.branch.id, head: 3 });

    expect((await s.undo()).branch).toMatchObject({ id: fork.branch.id, head: 3 });
    expect(await contents(s)).toEqual(["1", "2", "x"]);
    expect((await s.undo()).branch).toMatchObject({ id: root, head: 3 });
    await expect(s.undo()).rejects.toMatchObject({ code: "NOTHING_TO_UNDO" });
    expect((await s.redo()).branch.id).toBe(fork.branch.id);
    expect((await s.redo()).branch).toMatchObject({ id: fork.branch.id, head: 3 });
    await expect(s.redo()).rejects.toMatchObject({ code: "NOTHING_TO_REDO" });
  });

  it("a switch to the current branch, after writing on: undo takes back that switch (staying), not the older move", async () => {
    const { s, root } = await chat(["1", "2"]);
    const cp = await s.checkpoint();
    const fork = await s.rollback(cp.id); // the head: the root itself, no move
    expect(fork.branch.id).toBe(root);
    await s.append({ role: "user", content: "3" });
    const other = await s.rollback(cp.id); // root → other
    await s.append({ role: "user", content: "y" });
    expect((await s.switchBranch(other.branch.id)).branch.id).toBe(other.branch.id);
    expect((await s.undo()).branch).toMatchObject({ id: other.branch.id, head: 3 });
    expect((await s.undo()).branch).toMatchObject({ id: root, head: 3 });
  });

  it("a switch to the current branch that puts the world back in step is undone first, too", async () => {
    const keys = new Map<string, string>();
    let refuse = false;
    const put = defineTool({
      name: "put",
      run: async ({ key }: { key: string }) => void keys.set(key, "1"),
      undo: async ({ args }) => {
        if (refuse) throw new Error("not now");
        keys.delete(args.key);
      },
    });
    const { s, root } = await chat(["1"], { tools: [put] });
    const cp = await s.checkpoint();
    await s.append({ role: "user", content: "2" });
    const fork = await s.rollback(cp.id); // root → fork
    await s.invoke("put", { key: "a" });
    refuse = true;
    const stuck = await s.rollback(cp.id, { onUndoError: "continue" }); // fork → stuck, a's effect still out there
    expect(stuck.failed).toHaveLength(1);
    refuse = false;
    await s.append({ role: "user", content: "z" });
    const fixed = await s.switchBranch(stuck.branch.id); // a undone: the world matches the branch again
    expect(fixed.undone.map((t) => t.args)).toEqual([{ key: "a" }]);
    expect((await s.undo()).branch.id).toBe(stuck.branch.id);
    expect((await s.undo()).branch.id).toBe(fork.branch.id);
    expect((await s.undo()).branch.id).toBe(root);
  });

  it("a rollback to a checkpoint taken right where a switch landed is undone first; a second switch click is not", async () => {
    const { s, root } = await chat(["1", "2"]);
    const cp = await s.checkpoint();
    await s.append({ role: "user", content: "3" });
    const fork = await s.rollback(cp.id); // root → fork
    await s.switchBranch(root); // fork → root
    expect((await s.switchBranch(root)).branch.id).toBe(root); // clicked twice: the same switch
    const here = await s.checkpoint({ name: "here" });
    expect((await s.rollback(here.id)).branch.id).toBe(root); // another move, that stays
    expect((await s.undo()).branch).toMatchObject({ id: root, head: 3 });
    expect((await s.undo()).branch.id).toBe(fork.branch.id);
    expect((await s.undo()).branch.id).toBe(root);
    await expect(s.undo()).rejects.toMatchObject({ code: "NOTHING_TO_UNDO" });
  });

  it("after an undo, a move that stays leaves the redo in place and the next undo walks on back", async () => {
    const { s, root } = await chat(["1", "2"]);
    const cp = await s.checkpoint();
    await s.append({ role: "user", content: "3" });
    const fork = await s.rollback(cp.id);
    await s.append({ role: "user", content: "x" });
    await s.switchBranch(root); // fork → root
    await s.undo(); // back on the fork
    expect((await s.switchBranch(fork.branch.id)).branch.id).toBe(fork.branch.id);
    expect((await s.undo()).branch.id).toBe(root);
    expect((await s.redo()).branch.id).toBe(fork.branch.id);
    expect((await s.redo()).branch.id).toBe(root);
  });
});
