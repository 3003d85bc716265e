// A watcher whose worker thread dies (out of heap, an uncaught error) is given up: the workspace falls back to full
// stat walks, and checkpoints go on (they used to wait forever for a rescan the dead worker never answered).
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { engineOf } from "../../src/sessions/forkpoint.js";
import { workspaceStateFor } from "../../src/sessions/workspace/state.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;

beforeEach(() => {
  dir = makeTempDir("forkpoint-watcher-death-");
  ws = path.join(dir, "project");
  fs.mkdirSync(path.join(ws, "src"), { recursive: true });
  fs.writeFileSync(path.join(ws, "src/a.ts"), "one\n");
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db") });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

/** `work` settled, or "hung" when it has not within `ms` (a bound on a hang, not a timing claim). */
const settledWithin = <T>(work: Promise<T>, ms: number) =>
  Promise.race([work, new Promise<"hung">((resolve) => setTimeout(() => resolve("hung"), ms).unref())]);

it("a dead watcher thread is given up, and the next checkpoint captures what changed", async () => {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const one = await s.checkpoint({ name: "one" });
  // A second scan: the watcher follows changes from here on.
  await s.diffFiles(one.id, "disk");
  const watch = workspaceStateFor(engineOf(fp).ctx, s.id)!.watch!;
  expect(watch).not.toBeNull();

  await watch.worker.terminate();
  fs.writeFileSync(path.join(ws, "src/a.ts"), "two\n");
  fs.writeFileSync(path.join(ws, "src/b.ts"), "new\n");

  const two = await settledWithin(s.checkpoint({ name: "two" }), 20_000);
  expect(two).not.toBe("hung");
  if (two === "hung") return;
  const diff = await s.diffFiles(one.id, two.id);
  expect(diff.modified).toContain("src/a.ts");
  expect(diff.added).toContain("src/b.ts");
  // And later ones too, each by a full walk.
  fs.writeFileSync(path.join(ws, "src/a.ts"), "three\n");
  const three = await settledWithin(s.checkpoint({ name: "three" }), 20_000);
  expect(three).not.toBe("hung");
  if (three !== "hung") expect((await s.diffFiles(two.id, three.id)).modified).toContain("src/a.ts");
});
