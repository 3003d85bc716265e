// A workspace attached under other options (or another directory) and then again as before: what forkpoint last saw
// there is the newest checkpoint captured under those options, so hand edits made during the detour, out of its sight,
// stay drift and a rewind to that checkpoint refuses them (or, forced, saves them) instead of writing over them.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readOrNull, tempDir } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

describe.each(["other options", "another directory"])("attached again after %s", (detour) => {
  it.each(["files", "both"] as const)("a %s rewind refuses hand edits and new files, and forced saves them", async (scope) => {
    const ws = tempDir("forkpoint-reattach-");
    const a = path.join(ws, "a.txt");
    const made = path.join(ws, "made.txt");
    fs.writeFileSync(a, "orig\n");
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    await s.append({ role: "user", content: "go" });
    const c0 = await s.checkpoint({ name: "c0" });
    // The detour's rules do not capture the files edited (leaving them with unsaved changes would be refused).
    if (detour === "other options") await s.attachWorkspace(ws, { exclude: ["a.txt", "made.txt"] });
    else await s.attachWorkspace(tempDir("forkpoint-reattach-other-"));
    fs.writeFileSync(a, "HAND EDIT\n");
    fs.writeFileSync(made, "new by hand\n");
    await s.attachWorkspace(ws);

    expect((await s.plan({ checkpointId: c0.id, scope })).drift!.slice().sort()).toEqual(["a.txt", "made.txt"]);
    expect((await rejectionOf(s.rollback(c0.id, { scope }))).code).toBe("WORKSPACE_DRIFT");
    expect([readOrNull(a), readOrNull(made)]).toEqual(["HAND EDIT\n", "new by hand\n"]);

    const forced = await s.rollback(c0.id, { scope, force: true });
    expect(readOrNull(a)).toBe("orig\n");
    const saved = forced.savedDrift!;
    expect(saved).toBeDefined();
    expect((await s.diffFiles(c0.id, saved.checkpointId)).modified).toEqual(["a.txt"]);
    expect((await s.diffFiles(c0.id, saved.checkpointId)).added).toEqual(["made.txt"]);
  });
});

it("attached under options no checkpoint captured, the directory is taken as it is now once a checkpoint keeps it", async () => {
  const ws = tempDir("forkpoint-reattach-new-");
  fs.writeFileSync(path.join(ws, "a.txt"), "orig\n");
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.checkpoint({ name: "c0" });
  fs.writeFileSync(path.join(ws, "a.txt"), "edited\n");
  await s.checkpoint({ name: "kept" });
  await s.attachWorkspace(ws, { exclude: ["*.tmp"] });
  const c1 = await s.checkpoint({ name: "c1" });
  expect((await s.plan({ checkpointId: c1.id, scope: "files" })).drift ?? []).toEqual([]);
});
