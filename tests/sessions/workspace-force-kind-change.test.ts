// From the third MCP review: a forced rollback was refused ("d would be overwritten, and forkpoint does not capture
// it") when a captured folder had become a file by hand, and the target has a file there: that file is drift like any
// other, saved first, as MCP's plan_rollback of the same rollback said it would be.
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
  dir = makeTempDir("forkpoint-wsforce-kind-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  dbFile = path.join(dir, "forkpoint.db");
  fp = openForkpoint({ path: dbFile });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

describe("a forced rollback over a folder turned into a file by hand", () => {
  it("saves that file as drift, restores the target, and the saved drift brings the hand-made file back", async () => {
    write("d/y.txt", "y\n");
    write("f", "file f\n");
    const s = await fp.createSession({ userId: "alice" });
    await s.attachWorkspace(ws);
    const a = await s.checkpoint({ name: "A" });
    fs.rmSync(path.join(ws, "d"), { recursive: true });
    write("d", "d as a file\n");
    fs.rmSync(path.join(ws, "f"));
    write("f/inner.txt", "f as a folder\n");
    const b = await s.checkpoint({ name: "B" });
    const B = tree();
    await s.rollback(a.id, { scope: "files" });
    fs.rmSync(path.join(ws, "d"), { recursive: true });
    write("d", "unsaved file d\n");
    const drifted = tree();

    const done = await s.rollback(b.id, { scope: "files", force: true });
    expect(done.savedDrift?.files).toEqual(expect.arrayContaining(["d"]));
    expect(tree()).toEqual(B);
    await s.rollback(done.savedDrift!.checkpointId, { scope: "files" });
    expect(tree()).toEqual(drifted);
  });
});
