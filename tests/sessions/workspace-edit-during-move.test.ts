// From the MCP review: a hand edit made while a move runs no tool is not forkpoint's doing. Absorbing it as the move's
// own (as the changes of an undo or a replay are) made it "last seen", so the next rewind overwrote it unsaved.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defineTool, type Forkpoint } from "../../src/index.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";
import { writeFileTool } from "../fixtures/file-tools.js";

let dir: string;
let ws: string;
let fp: Forkpoint;

const file = () => path.join(ws, "a.txt");

beforeEach(() => {
  dir = makeTempDir("forkpoint-ws-edit-during-move-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [writeFileTool()] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

describe("a file edited by hand while a move that runs no tool finishes", () => {
  it("stays drift: the next rewind refuses to overwrite it, and a forced one saves it first", async () => {
    fs.writeFileSync(file(), "one\n");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const one = await s.checkpoint({ name: "one" });
    fs.writeFileSync(file(), "two\n");
    const two = await s.checkpoint({ name: "two" });

    // The listener runs once the files are restored, before the move ends: an editor saving at that moment.
    let edited = false;
    fp.on("rollback", () => {
      if (edited) return;
      edited = true;
      fs.writeFileSync(file(), "typed during the rollback\n");
    });
    await s.rollback(one.id, { scope: "both" });
    expect(edited).toBe(true);
    expect(fs.readFileSync(file(), "utf8")).toBe("typed during the rollback\n");

    expect(await rejectionOf(s.rollback(two.id, { scope: "both" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(fs.readFileSync(file(), "utf8")).toBe("typed during the rollback\n");
    const forced = await s.rollback(two.id, { scope: "both", force: true });
    expect(forced.savedDrift?.files).toEqual(["a.txt"]);
    expect(fs.readFileSync(file(), "utf8")).toBe("two\n");
    expect((await s.diffFiles(forced.savedDrift!.checkpointId, two.id)).patch).toContain("-typed during the rollback");
  });

  it("after a move that undid a tool call and replays none: stays drift too", async () => {
    fs.writeFileSync(file(), "one\n");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const one = await s.checkpoint({ name: "one" });
    await s.invoke("write_file", { path: path.join(ws, "b.txt"), text: "by the tool\n" });
    fs.writeFileSync(file(), "two\n");
    const two = await s.checkpoint({ name: "two" });

    let edited = false;
    fp.on("rollback", () => {
      if (edited) return;
      edited = true;
      fs.writeFileSync(file(), "typed during the rollback\n");
    });
    const back = await s.rollback(one.id, { scope: "both" });
    expect(back.undone).toHaveLength(1);
    expect(fs.existsSync(path.join(ws, "b.txt"))).toBe(false);
    expect(fs.readFileSync(file(), "utf8")).toBe("typed during the rollback\n");

    expect(await rejectionOf(s.rollback(two.id, { scope: "both" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(fs.readFileSync(file(), "utf8")).toBe("typed during the rollback\n");
  });

  // Review 10: the scan after the undo took the save for the undo's own change, and the restore then overwrote it.
  it("saved while a rewind runs a tool's undo, elsewhere than that call's files: drift, never overwritten", async () => {
    fs.writeFileSync(file(), "one\n");
    const editing = path.join(dir, "editor-save");
    // The undo's own work done, an editor saves a.txt while it still runs (here from inside it: a known point).
    const slowUndo = defineTool<{ path: string; text: string }, { previous: string | null }>({
      name: "put",
      run: (args) => {
        const previous = fs.existsSync(args.path) ? fs.readFileSync(args.path, "utf8") : null;
        fs.writeFileSync(args.path, args.text);
        return { previous };
      },
      undo: ({ args, result }) => {
        if (result.previous === null) fs.rmSync(args.path, { force: true });
        else fs.writeFileSync(args.path, result.previous);
        if (fs.existsSync(editing)) fs.writeFileSync(file(), "saved during the undo\n");
      },
    });
    const mine = openForkpoint({ path: path.join(dir, "slow.db"), tools: [slowUndo] });
    try {
      const s = await mine.createSession({ userId: "u" });
      await s.attachWorkspace(ws);
      const one = await s.checkpoint({ name: "one" });
      await s.invoke("put", { path: path.join(ws, "b.txt"), text: "by the tool\n" });
      fs.writeFileSync(file(), "two\n");
      await s.checkpoint({ name: "two" });
      fs.writeFileSync(editing, "");
      expect(await rejectionOf(s.rollback(one.id, { scope: "both" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
      // The undo ran (its own file is gone); the save outside that call's files is left as it is.
      expect(fs.existsSync(path.join(ws, "b.txt"))).toBe(false);
      expect(fs.readFileSync(file(), "utf8")).toBe("saved during the undo\n");
    } finally {
      await mine.close();
    }
  });

  // Review 13: saved by hand while one call's undo ran, into the file an older call's undo then wrote back over.
  it("saved while one undo runs, into the file the next undo writes: the move stops there, the save kept", async () => {
    const g = path.join(ws, "g.txt");
    const h = path.join(ws, "h.txt");
    const put = (name: string, target: string, onUndo?: () => void) =>
      defineTool<{ text: string }, { previous: string | null }>({
        name,
        run: (args) => {
          const previous = fs.existsSync(target) ? fs.readFileSync(target, "utf8") : null;
          fs.writeFileSync(target, args.text);
          return { previous };
        },
        undo: ({ result }) => {
          if (result.previous === null) fs.rmSync(target, { force: true });
          else fs.writeFileSync(target, result.previous);
          onUndo?.();
        },
      });
    let save = false;
    const tools = [put("put_g", g), put("put_h", h, () => save && fs.writeFileSync(g, "saved by hand\n"))];
    const mine = openForkpoint({ path: path.join(dir, "two-undos.db"), tools });
    try {
      fs.writeFileSync(g, "g0\n");
      const s = await mine.createSession({ userId: "u" });
      await s.attachWorkspace(ws);
      const start = await s.checkpoint({ name: "start" });
      await s.invoke("put_g", { text: "g1\n" });
      await s.invoke("put_h", { text: "h1\n" });
      await s.checkpoint({ name: "end" });
      save = true;
      expect(await rejectionOf(s.rollback(start.id, { scope: "both" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
      expect(fs.existsSync(h)).toBe(false);
      expect(fs.readFileSync(g, "utf8")).toBe("saved by hand\n");
      // put_g's undo never ran over the save: its call is still applied.
      expect((await s.toolTrack()).map((t) => [t.tool, t.applied])).toEqual([
        ["put_g", true],
        ["put_h", false],
      ]);
    } finally {
      await mine.close();
    }
  });
});
