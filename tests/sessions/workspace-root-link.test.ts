// The workspace's directory itself swapped for a symbolic link (to a copy elsewhere, say): a restore would write through
// it into a directory forkpoint never attached. Refused, forced or not, before anything is saved or written.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { ConflictError, type Forkpoint } from "../../src/index.js";
import { filesUnder, makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;

beforeEach(() => {
  dir = makeTempDir("forkpoint-root-link-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db") });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

it.each(["files", "both"] as const)('a "%s" rewind through a root swapped for a link is refused, even forced', async (scope) => {
  fs.writeFileSync(path.join(ws, "a.txt"), "one\n");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const a = await s.checkpoint({ name: "A" });
  fs.writeFileSync(path.join(ws, "a.txt"), "two\n");
  fs.writeFileSync(path.join(ws, "b.txt"), "b\n");
  await s.checkpoint({ name: "B" });

  // Moved away, and a link to another directory put in its place.
  const elsewhere = path.join(dir, "elsewhere");
  fs.mkdirSync(elsewhere);
  fs.writeFileSync(path.join(elsewhere, "a.txt"), "someone else's\n");
  fs.writeFileSync(path.join(elsewhere, "b.txt"), "b\n");
  fs.renameSync(ws, path.join(dir, "project.old"));
  fs.symlinkSync(elsewhere, ws);
  const checkpoints = (await s.listCheckpoints({})).items.length;

  for (const force of [true, false]) {
    const e = await rejectionOf(s.rollback(a.id, { scope, force }));
    expect(filesUnder(elsewhere, "\0")).toEqual({ "a.txt": "someone else's\n", "b.txt": "b\n" });
    // Nothing saved as drift either.
    expect((await s.listCheckpoints({})).items.length).toBe(checkpoints);
    expect(e).toBeInstanceOf(ConflictError);
    expect(e).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(e.message).toContain("symbolic link");
  }
  expect((await s.plan({ checkpointId: a.id, scope })).blocked).toContain("symbolic link");
});
