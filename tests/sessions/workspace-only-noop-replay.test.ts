// A workspace-only tool's call that changed no file did nothing: a move with files never runs it, nor its undo (review 28).
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineTool, type Forkpoint } from "../../src/index.js";
import { readOrNull } from "../fixtures/file-tools.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
const file = (rel: string) => path.join(ws, rel);
const handled: string[] = [];

/** delete_file: removes a file, returning what it held (null: it was not there); undo writes it back. */
const deleteFile = defineTool<{ path: string }, { previous: string | null }>({
  name: "delete_file",
  effects: "workspace",
  run: (args, ctx) => {
    handled.push(`${ctx.replay ? "replay" : "run"} ${path.basename(args.path)}`);
    const previous = readOrNull(args.path);
    fs.rmSync(args.path, { force: true });
    return { previous };
  },
  undo: ({ args, result }) => {
    handled.push(`undo ${path.basename(args.path)}`);
    if (result.previous !== null) fs.writeFileSync(args.path, result.previous);
  },
});

beforeEach(() => {
  dir = makeTempDir("forkpoint-noop-replay-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  handled.length = 0;
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [deleteFile] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

const trackOf = async (s: Awaited<ReturnType<Forkpoint["createSession"]>>) => (await s.toolTrack()).map((t) => [t.position, t.applied]);

it("an undo to a call that deleted nothing, made after the restored snapshot, marks it applied over the files", async () => {
  const s = await fp.createSession({ userId: "u" });
  fs.writeFileSync(file("a.txt"), "init\n");
  await s.attachWorkspace(ws);
  const c0 = await s.checkpoint({ name: "c0" });
  fs.renameSync(file("a.txt"), file("f.txt"));
  const cp1 = await s.checkpoint({ name: "cp1" });
  await s.invoke("delete_file", { path: file("f.txt") }); // #3 deletes f.txt
  await s.rollback(cp1.id, { scope: "both" });
  await s.undo({ scope: "both" });
  await s.invoke("delete_file", { path: file("f.txt") }); // #4: f.txt is gone already, it changes nothing
  await s.rollback(cp1.id, { scope: "files" }); // f.txt back: #3 set aside, #4 stays applied
  expect(readOrNull(file("f.txt"))).toBe("init\n");
  expect(await trackOf(s)).toEqual([
    [3, false],
    [4, true],
  ]);
  await s.redo({ scope: "both" });
  handled.length = 0;

  const back = await s.undo({ scope: "both" });
  expect(back.replayed).toEqual([]);
  expect(back.files).toEqual({ written: [], deleted: [] });
  expect(handled).toEqual([]);
  expect(readOrNull(file("f.txt"))).toBe("init\n");
  expect(await trackOf(s)).toEqual([
    [3, false],
    [4, true],
  ]);
  // Nothing drifted: the files are cp1's, and a rewind past them goes through.
  expect(await s.diffFiles(cp1.id, "disk", { patch: false })).toMatchObject({ added: [], modified: [], deleted: [] });
  await s.rollback(c0.id, { scope: "both" });
  expect(readOrNull(file("a.txt"))).toBe("init\n");
  expect(readOrNull(file("f.txt"))).toBeNull();
});

it("a move with files takes back a call that deleted nothing without running its undo", async () => {
  const s = await fp.createSession({ userId: "u" });
  fs.writeFileSync(file("f.txt"), "kept\n");
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("delete_file", { path: file("gone.txt") }); // nothing there: changes nothing
  // Written by hand and kept in a checkpoint: an undo run over it would be a write the call never made.
  fs.writeFileSync(file("gone.txt"), "later\n");
  await s.checkpoint({ name: "later" });

  const back = await s.rollback(start.id, { scope: "both" });
  expect(handled).toEqual(["run gone.txt"]);
  expect(back.undone.map((t) => t.tool)).toEqual(["delete_file"]);
  expect(await trackOf(s)).toEqual([]);
  expect(readOrNull(file("gone.txt"))).toBeNull();
  expect(readOrNull(file("f.txt"))).toBe("kept\n");
  // Brought back with the files that hold it: marked applied, never run.
  const again = await s.undo({ scope: "both" });
  expect(again.replayed).toEqual([]);
  expect(handled).toEqual(["run gone.txt"]);
  expect(readOrNull(file("gone.txt"))).toBe("later\n");
  expect(await trackOf(s)).toEqual([[2, true]]);
});

it("a move without files runs such a call's undo and replay as any call's", async () => {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("delete_file", { path: file("gone.txt") });
  await s.rollback(start.id, { scope: "conversation" });
  await s.undo({ scope: "conversation" });
  expect(handled).toEqual(["run gone.txt", "undo gone.txt", "replay gone.txt"]);
});
