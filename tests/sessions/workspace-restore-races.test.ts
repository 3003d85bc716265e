// A workspace restored while someone else works in it: a file edited while the restore runs is never overwritten (it is
// kept, with its newer content, and said); another process's checkpoints taken meanwhile never capture the restore's
// staged files, nor a mix of the two versions. Real child processes edit, and restore, while this one works.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConflictError, type Checkpoint, type Forkpoint, type SessionHandle } from "../../src/index.js";
import { filesUnder, makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";
import { startWorker } from "../fixtures/workers.js";

const LOOP = fileURLToPath(new URL("../fixtures/workspace-restore-loop.ts", import.meta.url));
const EDITOR = fileURLToPath(new URL("../fixtures/workspace-editor.ts", import.meta.url));
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

describe("files edited while a restore runs", () => {
  it("are never overwritten: kept with their newer content, said in the result, and drift afterwards", async () => {
    const { s, a, b } = await twoVersions(1200);
    // Forty files the restore rewrites late (their folders come last), edited once it started staging.
    const edited = Array.from({ length: 40 }, (_, i) => `d${9 - (i % 3)}/f${1199 - 10 * i - (i % 3)}.txt`).sort();
    expect(new Set(edited).size).toBe(40);
    const editor = startWorker(EDITOR, [ws, "d0", ...edited]);
    await editor.ready;
    const moved = await s.rollback(a.id, { scope: "files" });
    expect((await editor.done).stdout).toContain("edited");
    // Every edit is there, whether it came before the restore reached its file (kept) or after (written over it).
    for (const rel of edited) expect(fs.readFileSync(path.join(ws, rel), "utf8")).toBe(`edited by hand: ${rel}\n`);
    // Those edited before the restore reached them are said (all of them, unless this machine stalled the editor).
    const kept = moved.files!.kept ?? [];
    expect(edited).toEqual(expect.arrayContaining(kept));
    expect(moved.files!.written).toHaveLength(1200 - kept.length);
    expect(await s.diffFiles(a.id, "disk", { patch: false })).toMatchObject({ added: [], modified: edited, deleted: [] });
    // Changed since forkpoint last saw them: the next move refuses to overwrite them unsaved.
    expect(await rejectionOf(s.rollback(b.id, { scope: "files" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  });
});

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
    const { s, a, b } = await twoVersions(200);
    const worker = startWorker(LOOP, [db, s.id, a.id, b.id, "16"]);
    await worker.ready;
    const other = openForkpoint({ path: db });
    try {
      const mine = await other.getSession(s.id, { userId: "alice" });
      const toB = (await s.diffFiles(a.id, b.id, { patch: false })).modified;
      let taken = 0;
      let refused = 0;
      const unexpected: string[] = [];
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
          if (error instanceof ConflictError && error.code === "MOVE_IN_PROGRESS") refused++;
          else unexpected.push(String(error));
        }
      }
      const run = await worker.done;
      expect([run.code, run.stderr]).toEqual([0, ""]);
      expect(unexpected).toEqual([]);
      // Some checkpoints went through between the restores (the others were refused while one ran).
      expect(taken, `${refused} refused`).toBeGreaterThan(0);
    } finally {
      worker.child.kill("SIGTERM");
      await worker.done;
      await other.close();
    }
    expect(Object.keys(tree()).filter((p) => p.includes(".forkpoint-"))).toEqual([]);
  });
});
