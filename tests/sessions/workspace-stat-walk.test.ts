// The watcher's stat walk (issue 34): a change that makes no event (a write through a hard link made from outside the
// workspace once it is followed) is found within the walk's interval (50 ms here, FORKPOINT_WATCH_WALK_MS), and walks
// over files that did not change name none of them, so they cost no read.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Forkpoint, SessionHandle } from "../../src/index.js";
import { engineOf } from "../../src/sessions/forkpoint.js";
import { workspaceStateFor } from "../../src/sessions/workspace/state.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let outside: string;
let fp: Forkpoint;

const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws, rel), text);
};
const stateOf = (s: SessionHandle) => workspaceStateFor(engineOf(fp).ctx, s.id)!;
/** The session's watcher's walks (finished, and paths they named), as of its last scan. */
const walks = (s: SessionHandle) => stateOf(s).watch!.walks;
const pause = () => new Promise((resolve) => setTimeout(resolve, 20));

/** Files with an mtime an hour back: read once, then trusted to their stat data (none is racy). */
function oldFiles(n: number): void {
  const past = new Date(Date.now() - 3_600_000);
  for (let i = 0; i < n; i++) {
    write(`src/d${i % 4}/f${i}.ts`, `export const v${i} = ${i};\n`);
    fs.utimesSync(path.join(ws, `src/d${i % 4}/f${i}.ts`), past, past);
  }
}

beforeEach(() => {
  dir = makeTempDir("forkpoint-statwalk-");
  ws = path.join(dir, "project");
  outside = path.join(dir, "elsewhere");
  fs.mkdirSync(ws);
  fs.mkdirSync(outside);
  process.env.FORKPOINT_WATCH_WALK_MS = "50";
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db") });
});
afterEach(async () => {
  delete process.env.FORKPOINT_WATCH_WALK_MS;
  await fp.close();
  removeDir(dir);
});

describe("the watcher's stat walk", () => {
  it("finds a write through a hard link made from outside once the workspace is followed", async () => {
    oldFiles(8);
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const one = await s.checkpoint({ name: "one" });
    // A second scan: the watcher follows changes from here on.
    expect((await s.diffFiles(one.id, "disk")).patch).toBe("");
    expect(stateOf(s).watch).not.toBeNull();

    fs.linkSync(path.join(ws, "src/d1/f1.ts"), path.join(outside, "f1-link.ts"));
    fs.writeFileSync(path.join(outside, "f1-link.ts"), "edited through the link\n");
    let patch = "";
    for (let i = 0; i < 500 && !patch.includes("+edited through the link"); i++, await pause())
      patch = (await s.diffFiles(one.id, "disk")).patch;
    expect(patch).toContain("+edited through the link");
    expect(walks(s).found).toBeGreaterThan(0);

    const two = await s.checkpoint({ name: "two" });
    fs.rmSync(path.join(ws, "src"), { recursive: true });
    await s.rollback(two.id, { scope: "files", force: true });
    expect(fs.readFileSync(path.join(ws, "src/d1/f1.ts"), "utf8")).toBe("edited through the link\n");
  });

  it("names no file that did not change, so that its walks cost no read", async () => {
    oldFiles(40);
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const one = await s.checkpoint({ name: "one" });
    const scan = () => s.diffFiles(one.id, "disk");
    await scan();
    // The files' ctimes are recent (utimes sets them): walks name them until they are 2 s older than a walk's start.
    // Settled: two walks in a row named nothing.
    let settled = false;
    let { done: since, found } = walks(s);
    for (let i = 0; i < 1000 && !settled; i++, await pause()) {
      await scan();
      const now = walks(s);
      if (now.found !== found) ({ done: since, found } = now);
      settled = now.done - since >= 2;
    }
    expect(settled, `walks ${JSON.stringify(walks(s))}, named unchanged since walk ${since}`).toBe(true);

    const reads = stateOf(s).cache.reads;
    const from = walks(s);
    for (let i = 0; i < 500 && walks(s).done < from.done + 3; i++, await pause()) await scan();
    expect(walks(s).done).toBeGreaterThanOrEqual(from.done + 3);
    expect(walks(s).found).toBe(from.found);
    expect(stateOf(s).cache.reads).toBe(reads);
    expect((await scan()).patch).toBe("");
  });
});
