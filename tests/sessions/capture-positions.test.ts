// A checkpoint that captures files is a point of its own, messages or none: its capture is an entry of the log, so a
// session that only checkpoints a directory (an MCP client's) still forks on rollback and walks back with undo/redo.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { filesUnder, makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let dbFile: string;
let fp: Forkpoint;

const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws, rel), text);
};
const tree = () => filesUnder(ws, dbFile);

beforeEach(() => {
  dir = makeTempDir("forkpoint-capture-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  dbFile = path.join(dir, "forkpoint.db");
  fp = openForkpoint({ path: dbFile });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

describe("checkpoints that capture files", () => {
  it("each take a position of their own; a rollback forks, undo and redo cross them", async () => {
    const s = await fp.createSession({ userId: "alice" });
    write("a.txt", "one\n");
    await s.attachWorkspace(ws);
    const one = await s.checkpoint({ name: "one" });
    write("a.txt", "two\n");
    write("dir/b.txt", "b\n");
    const two = await s.checkpoint({ name: "two" });
    expect([one.position, two.position]).toEqual([1, 2]);
    expect(await s.history()).toEqual([]);
    expect(await s.getState()).toEqual({});

    const back = await s.rollback(one.id, { scope: "both" });
    expect(tree()).toEqual({ "a.txt": "one\n" });
    expect(back.branch).toMatchObject({ parentId: two.branchId, forkPosition: 1, forkCheckpointId: one.id, current: true });

    await s.undo({ scope: "both" });
    expect(tree()).toEqual({ "a.txt": "two\n", "dir/b.txt": "b\n" });
    expect((await s.info()).currentBranchId).toBe(two.branchId);
    await s.redo({ scope: "both" });
    expect(tree()).toEqual({ "a.txt": "one\n" });
    expect((await s.info()).currentBranchId).toBe(back.branch.id);

    // A second rollback to where the session is writes no empty branch.
    const again = await s.rollback(one.id, { scope: "both" });
    expect(again.branch.id).toBe(back.branch.id);
    expect(await fp.verify()).toMatchObject({ ok: true });
  });

  it("keep the state as it is, and export, import and verify as any state change does", async () => {
    const s = await fp.createSession({ userId: "alice" });
    await s.setState({ step: 1 });
    await s.append({ role: "user", content: "hi" });
    write("a.txt", "one\n");
    await s.attachWorkspace(ws);
    const cp = await s.checkpoint({ name: "one" });
    expect(cp.position).toBe(3);
    expect(await s.getState()).toEqual({ step: 1 });
    expect((await s.restore(cp.id)).state).toEqual({ step: 1 });
    expect((await s.history()).map((m) => m.content)).toEqual(["hi"]);

    const doc = await fp.exportSession(s.id, { userId: "alice" });
    await fp.deleteSession(s.id, { userId: "alice" });
    const copy = await fp.importSession(doc, { userId: "alice" });
    expect((await copy.restore(cp.id)).checkpoint.position).toBe(3);
    expect(await copy.getState()).toEqual({ step: 1 });
    expect(await fp.verify()).toMatchObject({ ok: true });
  });

  it("without a workspace, a checkpoint writes no entry", async () => {
    const s = await fp.createSession({ userId: "alice" });
    const a = await s.checkpoint({ name: "a" });
    const b = await s.checkpoint({ name: "b" });
    expect([a.position, b.position]).toEqual([0, 0]);
  });
});
