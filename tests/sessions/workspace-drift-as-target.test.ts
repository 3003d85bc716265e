// Drift that already is what a restore would write: a file changed by hand into the target's very content and mode (or
// deleted where the target has none) overwrites nothing, so it does not refuse the move; any other drift still does.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
const at = (rel: string) => path.join(ws, rel);

beforeEach(() => {
  dir = makeTempDir("forkpoint-drift-target-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db") });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

async function twoCheckpoints() {
  fs.writeFileSync(at("a.txt"), "one\n");
  fs.writeFileSync(at("b.txt"), "b\n");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const a = await s.checkpoint({ name: "A" });
  fs.writeFileSync(at("a.txt"), "two\n");
  fs.writeFileSync(at("new.txt"), "new\n");
  const b = await s.checkpoint({ name: "B" });
  return { s, a, b };
}

it("a file edited by hand back to the target's content, and one deleted that the target lacks, move with it", async () => {
  const { s, a, b } = await twoCheckpoints();
  fs.writeFileSync(at("a.txt"), "one\n");
  fs.rmSync(at("new.txt"));
  expect((await s.plan({ checkpointId: a.id, scope: "files" })).drift).toEqual([]);
  const back = await s.rollback(a.id, { scope: "files" });
  expect(back.savedDrift).toBeUndefined();
  expect(back.files).toEqual({ written: [], deleted: [] });
  expect(await s.diffFiles(a.id)).toMatchObject({ added: [], modified: [], deleted: [] });
  // What forkpoint saw is the target: going forward again is no drift either.
  const forward = await s.rollback(b.id, { scope: "both" });
  expect(forward.files).toEqual({ written: ["a.txt", "new.txt"], deleted: [] });
  expect(fs.readFileSync(at("a.txt"), "utf8")).toBe("two\n");
});

it("other drift beside it still refuses the move, naming only that drift; a mode that differs is drift", async () => {
  const { s, a } = await twoCheckpoints();
  fs.writeFileSync(at("a.txt"), "one\n");
  fs.writeFileSync(at("b.txt"), "mine\n");
  const refused = await rejectionOf(s.rollback(a.id, { scope: "files" }));
  expect(refused).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(refused.message).toContain("(b.txt)");
  const forced = await s.rollback(a.id, { scope: "files", force: true });
  expect(forced.savedDrift?.files).toEqual(["b.txt"]);
  expect(fs.readFileSync(at("b.txt"), "utf8")).toBe("b\n");

  await s.checkpoint({ name: "C" });
  fs.writeFileSync(at("a.txt"), "two\n");
  await s.checkpoint({ name: "D" });
  // The target's content, but executable: not what the restore would write.
  fs.writeFileSync(at("a.txt"), "one\n");
  fs.chmodSync(at("a.txt"), 0o755);
  expect(await rejectionOf(s.rollback(a.id, { scope: "files" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
});
