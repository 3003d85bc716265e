// Review 16: files changed while a move runs its tools, outside their calls' files, stay drift whatever becomes of the
// move (an undo failing, a replay writing there); a call that rewrites a file unchanged is still that file's; and a
// workspace attached again as it was keeps what forkpoint last saw.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defineTool, type Forkpoint } from "../../src/index.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
/** Run by the tool's undo after it wrote its file back, with that file's name; `failing` names one whose undo throws. */
let afterUndo: (name: string) => void = () => {};
let failing: string | undefined;

const at = (name: string) => path.join(ws, name);
const read = (name: string) => (fs.existsSync(at(name)) ? fs.readFileSync(at(name), "utf8") : null);

/** Writes `text` to `name` in the workspace; its undo writes back what was there. */
const writeFile = defineTool<{ name: string; text: string }, { previous: string | null }>({
  name: "write_file",
  run: ({ name, text }) => {
    const previous = read(name);
    fs.writeFileSync(at(name), text);
    return { previous };
  },
  undo: ({ args, result }) => {
    if (failing === args.name) throw new Error(`undo of ${args.name} failed`);
    if (result.previous === null) fs.rmSync(at(args.name), { force: true });
    else fs.writeFileSync(at(args.name), result.previous);
    afterUndo(args.name);
  },
});

beforeEach(() => {
  dir = makeTempDir("forkpoint-ws-drift-in-move-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [writeFile] });
  afterUndo = () => {};
  failing = undefined;
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

describe("a file saved while a move's undos run, outside their calls' files", () => {
  it("stays drift when a later undo fails: the retried move refuses to overwrite it", async () => {
    fs.writeFileSync(at("a.txt"), "a0\n");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const start = await s.checkpoint({ name: "start" });
    await s.invoke("write_file", { name: "b.txt", text: "b1\n" });
    await s.invoke("write_file", { name: "c.txt", text: "c1\n" });
    afterUndo = (name) => name === "c.txt" && fs.writeFileSync(at("a.txt"), "saved by hand\n");
    failing = "b.txt";
    expect(await rejectionOf(s.rollback(start.id, { scope: "both" }))).toMatchObject({ code: "UNDO_FAILED" });
    afterUndo = () => {};
    failing = undefined;
    expect(read("a.txt")).toBe("saved by hand\n");

    expect(await rejectionOf(s.rollback(start.id, { scope: "both" }))).toMatchObject({
      code: "WORKSPACE_DRIFT",
      message: expect.stringContaining("a.txt"),
    });
    expect(read("a.txt")).toBe("saved by hand\n");
    const kept = await s.checkpoint({ name: "kept" });
    await s.rollback(start.id, { scope: "both" });
    expect([read("a.txt"), read("b.txt"), read("c.txt")]).toEqual(["a0\n", null, null]);
    await s.rollback(kept.id, { scope: "both" });
    expect(read("a.txt")).toBe("saved by hand\n");
  });

  it("deleted by hand: stays deleted (kept), not brought back by the restore", async () => {
    fs.writeFileSync(at("a.txt"), "a0\n");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const start = await s.checkpoint({ name: "start" });
    await s.invoke("write_file", { name: "c.txt", text: "c1\n" });
    afterUndo = () => fs.rmSync(at("a.txt"));
    const back = await s.rollback(start.id, { scope: "both" });
    expect(back.files).toEqual({ written: [], deleted: [], kept: ["a.txt"] });
    expect([read("a.txt"), read("c.txt")]).toEqual([null, null]);
  });

  it("written by a replay the move still has to run: the files step is refused, and the move goes on once it is kept", async () => {
    fs.writeFileSync(at("a.txt"), "a0\n");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const start = await s.checkpoint({ name: "start" });
    const first = (await s.info()).currentBranchId;
    await s.invoke("write_file", { name: "a.txt", text: "a on the first branch\n" });
    await s.rollback(start.id, { scope: "both" });
    await s.invoke("write_file", { name: "c.txt", text: "c1\n" });
    afterUndo = (name) => name === "c.txt" && fs.writeFileSync(at("a.txt"), "saved by hand\n");
    expect(await rejectionOf(s.switchBranch(first, { scope: "both" }))).toMatchObject({
      code: "WORKSPACE_DRIFT",
      message: expect.stringContaining("a call it replays next writes it"),
    });
    afterUndo = () => {};
    expect(read("a.txt")).toBe("saved by hand\n");
    const kept = await s.checkpoint({ name: "kept" });
    const again = await s.switchBranch(first, { scope: "both" });
    expect(again.branch.id).toBe(first);
    expect([read("a.txt"), read("c.txt")]).toEqual(["a on the first branch\n", null]);
    expect((await s.diffFiles(kept.id, "disk")).patch).toContain("-saved by hand");
  });
});

describe("a call that rewrites a file with the content it holds", () => {
  it("is that file's: rewinds across it give each checkpoint's files", async () => {
    fs.writeFileSync(at("a.txt"), "A\n");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const zero = await s.checkpoint({ name: "zero" });
    fs.writeFileSync(at("a.txt"), "B\n");
    await s.checkpoint({ name: "B" });
    await s.invoke("write_file", { name: "a.txt", text: "B\n" });
    fs.writeFileSync(at("a.txt"), "C\n");
    await s.checkpoint({ name: "C" });
    const back = await s.rollback(zero.id, { scope: "both" });
    expect(back.files).toEqual({ written: ["a.txt"], deleted: [] });
    expect(read("a.txt")).toBe("A\n");
    await s.undo({ scope: "both" });
    expect(read("a.txt")).toBe("C\n");
  });
});

describe("attachWorkspace again, as it was attached", () => {
  it("keeps what forkpoint last saw: files changed since stay drift", async () => {
    fs.writeFileSync(at("a.txt"), "a0\n");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws, { exclude: ["*.log"] });
    const start = await s.checkpoint({ name: "start" });
    fs.writeFileSync(at("a.txt"), "not checkpointed\n");
    await fp.close();
    fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [writeFile] });
    const again = await fp.getSession(s.id, { userId: "u" });
    await again.attachWorkspace(ws, { exclude: ["*.log"] });
    expect(await rejectionOf(again.rollback(start.id, { scope: "files" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(read("a.txt")).toBe("not checkpointed\n");
    const forced = await again.rollback(start.id, { scope: "files", force: true });
    expect(forced.savedDrift?.files).toEqual(["a.txt"]);
  });
});
