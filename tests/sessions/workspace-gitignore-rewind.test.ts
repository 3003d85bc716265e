// A rewind past the checkpoint that added a .gitignore makes the files it ignored visible, never captured. A rewind
// back to a checkpoint whose .gitignore ignores them (an undo) leaves them as they are: no drift to refuse, no delete;
// so does one to such a checkpoint of a file an older checkpoint captured.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { filesUnder, makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;

const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws, rel), text);
};
const tree = () => filesUnder(ws, "\0");

beforeEach(() => {
  dir = makeTempDir("forkpoint-wsgitignore-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db") });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

describe("build output a rewind made visible by deleting its .gitignore", () => {
  it("is left as it is by the undo, and by a forced one", async () => {
    write("a.txt", "a1\n");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    await s.checkpoint({ name: "zero" });
    write(".gitignore", "build/\n");
    write("build/out.js", "built\n");
    write("a.txt", "a2\n");
    await s.checkpoint({ name: "one" });
    const [zero] = (await s.listCheckpoints({ name: "zero" })).items;

    await s.rollback(zero!.id, { scope: "both" });
    expect(tree()).toEqual({ "a.txt": "a1\n", "build/out.js": "built\n" });
    const undone = await s.undo({ scope: "both" });
    expect(undone.files).toMatchObject({ deleted: [] });
    expect(tree()).toEqual({ ".gitignore": "build/\n", "a.txt": "a2\n", "build/out.js": "built\n" });

    // A file the agent wrote beside it is still drift; forced, it is saved, and build/out.js is neither saved nor deleted.
    await s.redo({ scope: "both" });
    write("new.txt", "unsaved\n");
    expect(await rejectionOf(s.undo({ scope: "both" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
    const forced = await s.undo({ scope: "both", force: true });
    expect(forced.savedDrift?.files).toEqual(["new.txt"]);
    expect(tree()).toEqual({ ".gitignore": "build/\n", "a.txt": "a2\n", "build/out.js": "built\n" });
    // Nothing is drift afterwards: redo goes forward again unforced, to the saved drift.
    await s.redo({ scope: "both" });
    expect(tree()).toEqual({ "a.txt": "a1\n", "build/out.js": "built\n", "new.txt": "unsaved\n" });
  });
});

describe("a file captured before a .gitignore line named it", () => {
  it("is not deleted by a rewind to a checkpoint that ignores it, nor by the undo back there", async () => {
    write(".env", "SECRET=1\n");
    write("app.js", "v1\n");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const one = await s.checkpoint({ name: "one" });
    write(".gitignore", ".env\n");
    write("app.js", "v2\n");
    const two = await s.checkpoint({ name: "two" });

    // Back at `one`, .env is captured again, as `one` holds it: nothing is written there.
    expect((await s.plan({ checkpointId: one.id, scope: "both" })).files).toEqual({ written: ["app.js"], deleted: [".gitignore"] });
    await s.rollback(one.id, { scope: "both" });
    expect(tree()).toEqual({ ".env": "SECRET=1\n", "app.js": "v1\n" });
    // `two` never captured .env (its .gitignore ignores it): plan, undo and a rewind there leave it as it is.
    expect((await s.plan({ checkpointId: two.id, scope: "both" })).files).toEqual({ written: [".gitignore", "app.js"], deleted: [] });
    const undone = await s.undo({ scope: "both" });
    expect(undone.files).toEqual({ written: [".gitignore", "app.js"], deleted: [] });
    expect(tree()).toEqual({ ".env": "SECRET=1\n", ".gitignore": ".env\n", "app.js": "v2\n" });
    await s.redo({ scope: "both" });
    await s.rollback(two.id, { scope: "both", force: true });
    expect(tree()).toEqual({ ".env": "SECRET=1\n", ".gitignore": ".env\n", "app.js": "v2\n" });
  });
});
