// `forkpoint diff` of a session with a workspace (an MCP session's, say) compares the checkpoints' files too, and says
// when it cannot (a checkpoint that captured none); a session without one shows no files line.
import fs from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { runInProcess } from "./in-process.js";

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

it("diff: the workspace files two checkpoints hold, added, modified and deleted; or why they are not compared", async () => {
  const root = makeTempDir("forkpoint-cli-diff-files-");
  dirs.push(root);
  const ws = path.join(root, "ws");
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, "a.txt"), "a1");
  fs.writeFileSync(path.join(ws, "gone.txt"), "g");
  const db = path.join(root, "fp.db");
  const fp = openForkpoint({ path: db });
  const s = await fp.createSession({ userId: "ann" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "start" });
  const base = await s.checkpoint({ name: "base" });
  fs.writeFileSync(path.join(ws, "a.txt"), "a2");
  fs.rmSync(path.join(ws, "gone.txt"));
  fs.writeFileSync(path.join(ws, "new.txt"), "n");
  const after = await s.checkpoint({ name: "after" });
  await fp.close();

  const run = (...args: string[]) => runInProcess(["--db", db, ...args, "-u", "ann"]);
  const text = (await run("diff", s.id, base.id, after.id)).stdout.trimEnd().split("\n");
  expect(text.slice(-4)).toEqual(["files: 1 added, 1 modified, 1 deleted", "  + new.txt", "  ~ a.txt", "  - gone.txt"]);
  expect(JSON.parse((await run("--json", "diff", s.id, base.id, after.id)).stdout).files).toEqual({
    added: ["new.txt"],
    modified: ["a.txt"],
    deleted: ["gone.txt"],
  });

  // A checkpoint without files (taken before the workspace was attached): said, not shown as no change.
  const fp2 = openForkpoint({ path: db });
  const t = await fp2.createSession({ userId: "ann" });
  await t.append({ role: "user", content: "start" });
  const bare = await t.checkpoint({ name: "bare" });
  await t.attachWorkspace(ws);
  const full = await t.checkpoint({ name: "full" });
  await fp2.close();
  const last = (await run("diff", t.id, bare.id, full.id)).stdout.trimEnd().split("\n").at(-1);
  expect(last).toMatch(new RegExp(`^files: not compared: .*checkpoint ${bare.id} holds no files`));
});
