// A restore that fails midway (a file that cannot be deleted or replaced) leaves the session usable by the same handle:
// the files it had moved are put back, or, when its journal stays (the process lost its database before clearing it),
// the handle's next call finishes it, as its own interrupted moves are resumed, instead of MOVE_IN_PROGRESS until a
// restart.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Checkpoint, Forkpoint, SessionHandle } from "../../src/index.js";
import { SELF_START } from "../../src/sessions/core/process-identity.js";
import { filesUnder, makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint, sqlOn } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let db: string;
let fp: Forkpoint;

const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws, rel), text);
};
const tree = () => filesUnder(ws, "\0");
const journalOf = async (sessionId: string) =>
  (await sqlOn<{ restoring: string | null }>(db, "SELECT restoring FROM workspaces WHERE session_id = $1", [sessionId]))[0]!.restoring;

/**
 * Makes `rel` impossible to delete or replace, even for root: immutable (chattr +i), or, for another user, in a folder
 * it may not write. Returns how to undo it, or null where neither works here.
 */
function lock(rel: string): (() => void) | null {
  const full = path.join(ws, rel);
  if (process.getuid?.() === 0) {
    if (spawnSync("chattr", ["+i", full]).status !== 0) return null;
    return () => void spawnSync("chattr", ["-i", full]);
  }
  fs.chmodSync(path.dirname(full), 0o555);
  return () => fs.chmodSync(path.dirname(full), 0o755);
}

beforeEach(() => {
  dir = makeTempDir("forkpoint-wsfail-");
  ws = path.join(dir, "project");
  db = path.join(dir, "forkpoint.db");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: db });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

/** A (a.txt, b.txt, ro/z.txt) and B (a.txt and ro/z.txt deleted, b.txt changed, c.txt new). */
async function twoVersions(): Promise<{ s: SessionHandle; a: Checkpoint; b: Checkpoint }> {
  write("a.txt", "A");
  write("b.txt", "B1");
  write("ro/z.txt", "Z");
  const s = await fp.createSession({ userId: "alice" });
  await s.attachWorkspace(ws);
  const a = await s.checkpoint({ name: "A" });
  fs.rmSync(path.join(ws, "a.txt"));
  fs.rmSync(path.join(ws, "ro/z.txt"));
  write("b.txt", "B2");
  write("c.txt", "C");
  const b = await s.checkpoint({ name: "B" });
  return { s, a, b };
}

describe("a restore that fails midway", () => {
  it("puts back what it moved, says so, and the same handle goes on", async (t) => {
    const { s, a, b } = await twoVersions();
    await s.rollback(a.id, { scope: "files" });
    const before = tree();
    // Back to B deletes a.txt (first, and it can), then ro/z.txt, which it cannot.
    const unlock = lock("ro/z.txt");
    if (!unlock) return t.skip();
    let e;
    try {
      e = await rejectionOf(s.rollback(b.id, { scope: "files" }));
    } finally {
      unlock();
    }
    expect(e).toMatchObject({ code: "WORKSPACE_WRITE_FAILED" });
    expect(e.message).toContain("put back as they were");
    expect(tree()).toEqual(before);
    expect(await journalOf(s.id)).toBeNull();
    // Nothing is left in the way: no refusal, no drift.
    expect(await s.diffFiles(a.id, "disk", { patch: false })).toMatchObject({ added: [], modified: [], deleted: [] });
    await s.checkpoint({ name: "after the failure" });
    await s.rollback(b.id, { scope: "files" });
    expect(tree()).toEqual({ "b.txt": "B2", "c.txt": "C" });
  });

  it("that cannot even stage a file answers WORKSPACE_WRITE_FAILED, with nothing changed", async (t) => {
    const { s, a } = await twoVersions();
    const before = tree();
    // Back to A writes ro/z.txt again: its folder takes no new file, so staging it fails before anything moves.
    const full = path.join(ws, "ro");
    const root = process.getuid?.() === 0;
    if (root && spawnSync("chattr", ["+i", full]).status !== 0) return t.skip();
    if (!root) fs.chmodSync(full, 0o555);
    let e;
    try {
      e = await rejectionOf(s.rollback(a.id, { scope: "files" }));
    } finally {
      if (root) spawnSync("chattr", ["-i", full]);
      else fs.chmodSync(full, 0o755);
    }
    expect(e).toMatchObject({ code: "WORKSPACE_WRITE_FAILED" });
    expect(e.message).toContain("nothing was changed");
    expect(tree()).toEqual(before);
    expect(await journalOf(s.id)).toBeNull();
    await s.rollback(a.id, { scope: "files" });
    expect(tree()).toEqual({ "a.txt": "A", "b.txt": "B1", "ro/z.txt": "Z" });
  });

  it("left journaled by this very thread is finished by its next call, not refused until a restart", async () => {
    const { s, a, b } = await twoVersions();
    // A restore B → A by this thread that stopped halfway (a.txt written, c.txt not yet deleted) and whose journal
    // stayed: its process lost the database before clearing it.
    const one = async (sql: string, param: string) => Object.values((await sqlOn(db, sql, [param]))[0]!)[0];
    const manifestId = await one("SELECT manifest_id FROM checkpoint_files WHERE checkpoint_id = $1", a.id);
    const fromManifestId = await one("SELECT manifest_id FROM workspaces WHERE session_id = $1", s.id);
    const fromBranchId = (await one("SELECT current_branch_id FROM sessions WHERE id = $1", s.id)) as string;
    const fromHead = await one("SELECT coalesce(max(position), 0) AS head FROM entries WHERE branch_id = $1", fromBranchId);
    const journal = {
      manifestId,
      fromManifestId,
      scope: "files",
      fromBranchId,
      fromHead,
      pid: process.pid,
      pidStart: SELF_START,
      pids: [process.pid],
    };
    await sqlOn(db, "UPDATE workspaces SET restoring = $1 WHERE session_id = $2", [JSON.stringify(journal), s.id]);
    write("a.txt", "A");

    const cp = await s.checkpoint({ name: "after" });
    expect(await journalOf(s.id)).toBeNull();
    expect(tree()).toEqual({ "a.txt": "A", "b.txt": "B1", "ro/z.txt": "Z" });
    expect(await s.diffFiles(a.id, cp.id, { patch: false })).toMatchObject({ added: [], modified: [], deleted: [] });
    await s.rollback(b.id, { scope: "files" });
    expect(tree()).toEqual({ "b.txt": "B2", "c.txt": "C" });
  });

  it("left journaled by another live thread is still refused (MOVE_IN_PROGRESS): it may be writing", async () => {
    const { s, a } = await twoVersions();
    const journal = {
      manifestId: 1,
      fromManifestId: 1,
      scope: "files",
      fromBranchId: "x",
      fromHead: 0,
      pid: process.pid,
      pidStart: `${SELF_START}0`,
      pids: [process.pid],
    };
    await sqlOn(db, "UPDATE workspaces SET restoring = $1 WHERE session_id = $2", [JSON.stringify(journal), s.id]);
    expect(await rejectionOf(s.rollback(a.id, { scope: "files" }))).toMatchObject({ code: "MOVE_IN_PROGRESS" });
    expect(await rejectionOf(s.checkpoint())).toMatchObject({ code: "MOVE_IN_PROGRESS" });
  });
});
