// A file made by hand that a tool call then moves (a rename; a copy, then a delete): its content, where the call put
// it, is a hand edit no checkpoint holds, drift as it was where it began. A files move refuses it (forced, saves it
// first), never deleting it unsaved.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineTool, type Forkpoint } from "../../src/index.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
const file = (rel: string) => path.join(ws, rel);
const read = (rel: string) => (fs.existsSync(file(rel)) ? fs.readFileSync(file(rel), "utf8") : null);

const renameFile = defineTool<{ from: string; to: string }, null>({
  name: "rename_file",
  run: ({ from, to }) => (fs.renameSync(from, to), null),
  undo: ({ args: { from, to } }) => fs.renameSync(to, from),
});
const copyThenDelete = defineTool<{ from: string; to: string }, null>({
  name: "copy_then_delete",
  run: ({ from, to }) => (fs.copyFileSync(from, to), fs.rmSync(from), null),
  undo: ({ args: { from, to } }) => (fs.copyFileSync(to, from), fs.rmSync(to)),
});

const moveAndEdit = defineTool<{ from: string; to: string }, null>({
  name: "move_and_edit",
  run: ({ from, to }) => (fs.renameSync(from, to), fs.appendFileSync(to, "-- footer\n"), null),
  undo: ({ args: { from, to } }) => (fs.writeFileSync(from, fs.readFileSync(to, "utf8").replace("-- footer\n", "")), fs.rmSync(to)),
});

beforeEach(() => {
  dir = makeTempDir("forkpoint-moved-hand-edit-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [renameFile, copyThenDelete, moveAndEdit] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

for (const tool of ["rename_file", "copy_then_delete", "move_and_edit"])
  it(`${tool}: a files rewind refuses the moved hand edit; forced, it saves it first`, async () => {
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const cp0 = await s.checkpoint({ name: "cp0" });
    fs.writeFileSync(file("draft.md"), "MY DRAFT, typed by hand\n");
    await s.invoke(tool, { from: file("draft.md"), to: file("docs.md") });

    expect((await s.plan({ checkpointId: cp0.id, scope: "files" })).drift).toEqual(["docs.md"]);
    await expect(s.rollback(cp0.id, { scope: "files" })).rejects.toMatchObject({ code: "WORKSPACE_DRIFT" });
    const landed = read("docs.md");
    expect(landed).toMatch(/^MY DRAFT, typed by hand\n/);

    const forced = await s.rollback(cp0.id, { scope: "files", force: true });
    expect(forced.savedDrift?.files).toEqual(["docs.md"]);
    expect(read("docs.md")).toBeNull();
    await s.rollback(forced.savedDrift!.checkpointId, { scope: "files" });
    expect(read("docs.md")).toBe(landed);
  });
