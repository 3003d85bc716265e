// A workspace restored while someone else works in it: another process's checkpoints taken meanwhile never capture
// the restore's staged files, nor a mix of the two versions (a real child process restores while this one checkpoints).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConflictError, type Checkpoint, type Forkpoint, type SessionHandle } from "../../src/index.js";
import { filesUnder, makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";
import { startWorker } from "../fixtures/workers.js";

const LOOP = fileURLToPath(new URL("../fixtures/workspace-restore-loop.ts", import.meta.url));
let dir: string;
let ws: string;
let db: string;
let fp: Forkpoint;

const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws, rel), text);
};
const tree = () => filesUnder(ws, "\0");

beforeEach(() => {
  dir = makeTempDir("forkpoint-wsrace-");
  ws = path.join(dir, "project");
  db = path.join(dir, "forkpoint.db");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: db });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

/** Version `v` of a tree of `n` files (every file differs between versions). */
const version = (v: string, n: number) => {
  for (let i = 0; i < n; i++) write(`d${i % 10}/f${i}.txt`, `${v} ${i} `.repeat(400));
};

async function twoVersions(n: number): Promise<{ s: SessionHandle; a: Checkpoint; b: Checkpoint }> {
  version("A", n);
  const s = await fp.createSession({ userId: "alice" });
  await s.attachWorkspace(ws);
  const a = await s.checkpoint({ name: "A" });
  version("B", n);
  const b = await s.checkpoint({ name: "B" });
  return { s, a, b };
}

describe("checkpoints while a restore runs", () => {
  it("never capture what a restore stages or links aside, whoever left it there", async () => {
    write("a.txt", "a");
    const s = await fp.createSession({ userId: "alice" });
    await s.attachWorkspace(ws);
    const cp = await s.checkpoint();
    // Named as restores name them (files.ts, staged.ts): beside a file, and the short form a long name gets.
    write("a.txt.forkpoint-4242.tmp", "staged");
    write("sub/b.txt.forkpoint-4242.old", "aside");
    write(".forkpoint-4242-0123456789abcdef.tmp", "staged, long name");
    write("notes.forkpoint-draft.tmp", "the user's");
    expect(await s.diffFiles(cp.id, "disk", { patch: false })).toEqual({
      added: ["notes.forkpoint-draft.tmp"],
      modified: [],
      deleted: [],
      patch: "",
    });
  });

  it("by another process are refused, or capture one version whole, never a staged file", async () => {
    const { s, a, b } = await twoVersions(300);
    const worker = startWorker(LOOP, [db, s.id, a.id, b.id, "40"]);
    await worker.ready;
    const other = openForkpoint({ path: db });
    try {
      const mine = await other.getSession(s.id, { userId: "alice" });
      const toB = (await s.diffFiles(a.id, b.id, { patch: false })).modified;
      let taken = 0;
      let refused = 0;
      let running = true;
      void worker.done.then(() => (running = false));
      while (running) {
        try {
          const cp = await mine.checkpoint();
          const d = await mine.diffFiles(a.id, cp.id, { patch: false });
          expect([...d.added, ...d.deleted]).toEqual([]);
          expect([[], toB]).toContainEqual(d.modified);
          taken++;
        } catch (error) {
          expect(error instanceof ConflictError ? error.code : String(error)).toBe("MOVE_IN_PROGRESS");
          refused++;
        }
      }
      expect(taken, `${refused} refused`).toBeGreaterThan(2);
    } finally {
      worker.child.kill("SIGTERM");
      await worker.done;
      await other.close();
    }
    expect(Object.keys(tree()).filter((p) => p.includes(".forkpoint-"))).toEqual([]);
  });
});
