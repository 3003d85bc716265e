// From the MCP review: a hand edit made while a move runs no tool is not forkpoint's doing. Absorbing it as the move's
// own (as the changes of an undo or a replay are) made it "last seen", so the next rewind overwrote it unsaved.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
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
});
