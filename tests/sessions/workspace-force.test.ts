// Forced workspace moves on real directories: `force: true` saves the files changed outside forkpoint in a checkpoint
// of their own, then overwrites them; without it drift stays a ConflictError. Crashes are real child processes killed
// right after the drift is saved, or in the middle of the restore that follows.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConflictError, ValidationError, defineTool, type Checkpoint, type Forkpoint, type SessionHandle } from "../../src/index.js";
import { filesUnder, makeTempDir, rejectionOf, removeDir, sleep } from "../helpers.js";
import { dumpOf, openForkpoint, sqlOn } from "../fixtures/backend.js";
import { nodeArgs } from "../fixtures/compiled.js";

const WORKER = fileURLToPath(new URL("../fixtures/forced-move-worker.ts", import.meta.url));
let dir: string;
let ws: string;
let dbFile: string;
let fp: Forkpoint;

const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws, rel), text);
};
const tree = () => filesUnder(ws, dbFile);
const journalOf = async (sessionId: string) =>
  (await sqlOn<{ restoring: string | null }>(dbFile, "SELECT restoring FROM workspaces WHERE session_id = $1", [sessionId]))[0]!.restoring;

const note = defineTool<{ rel: string; text: string }, null>({
  name: "note",
  run: async ({ rel, text }) => (write(rel, text), null),
  undo: async ({ args }) => fs.rmSync(path.join(ws, args.rel), { force: true }),
});

beforeEach(() => {
  dir = makeTempDir("forkpoint-wsforce-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  dbFile = path.join(ws, "forkpoint.db");
  fp = openForkpoint({ path: dbFile, tools: [note] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

const VERSION_A = { "a.txt": "A1\n", "b.txt": "B\n", "sub/c.txt": "C\n" };
const DRIFTED = { "a.txt": "hand edit\n", "sub/c.txt": "C\n", "new.txt": "added by hand\n" };

/** A workspace at version A (checkpoint `a`), then hand edits: a.txt changed, b.txt deleted, new.txt added. */
async function drifted(): Promise<{ s: SessionHandle; a: Checkpoint }> {
  for (const [rel, text] of Object.entries(VERSION_A)) write(rel, text);
  const s = await fp.createSession({ userId: "alice" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "hi" });
  const a = await s.checkpoint({ name: "A" });
  await s.append({ role: "assistant", content: "later" });
  write("a.txt", DRIFTED["a.txt"]);
  fs.rmSync(path.join(ws, "b.txt"));
  write("new.txt", DRIFTED["new.txt"]);
  return { s, a };
}

describe("force: true", () => {
  it("without force, drift is still a ConflictError that changes nothing", async () => {
    const { s, a } = await drifted();
    const before = await dumpOf(dbFile);
    const e = await rejectionOf(s.rollback(a.id, { scope: "files" }));
    expect(e).toBeInstanceOf(ConflictError);
    expect(e.code).toBe("WORKSPACE_DRIFT");
    expect(await rejectionOf(s.rollback(a.id, { scope: "files", force: false }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(await dumpOf(dbFile)).toEqual(before);
    expect(tree()).toEqual(DRIFTED);
  });

  it("saves the drifted files in a checkpoint of their own, then overwrites them with the target's", async () => {
    const { s, a } = await drifted();
    const left = (await s.info()).currentBranchId;
    const head = (await s.branches()).find((b) => b.current)!.head;
    const result = await s.rollback(a.id, { scope: "files", force: true });
    expect(tree()).toEqual(VERSION_A);
    expect(result.files).toEqual({ written: ["a.txt", "b.txt"], deleted: ["new.txt"] });
    expect(result.savedDrift).toEqual({ checkpointId: expect.any(String), files: ["a.txt", "b.txt", "new.txt"] });

    // The saved checkpoint: on the branch the move left, after its head (its capture is an entry), named and tagged.
    const saved = (await fp.listCheckpoints({ userId: "alice", sessionId: s.id })).items.find(
      (c) => c.id === result.savedDrift!.checkpointId,
    )!;
    expect(saved).toMatchObject({ name: "forced: drift before rollback", auto: false, branchId: left, position: head + 1 });
    expect(saved.metadata).toEqual({ forkpoint: "saved-drift", move: "rollback", drifted: ["a.txt", "b.txt", "new.txt"] });
    expect((await s.restore(saved.id)).history.map((m) => m.content)).toEqual(["hi", "later"]);

    // Its files are the drifted ones: what diffFiles shows against A, and what a move to it brings back.
    const d = await s.diffFiles(a.id, saved.id);
    expect([d.added, d.modified, d.deleted]).toEqual([["new.txt"], ["a.txt"], ["b.txt"]]);
    expect(d.patch).toContain("-A1\n+hand edit");
    expect(await s.diffFiles(a.id, "disk")).toMatchObject({ added: [], modified: [], deleted: [] });
    await s.rollback(saved.id, { scope: "files" });
    expect(tree()).toEqual(DRIFTED);
    expect(await fp.verify()).toMatchObject({ ok: true });
  });

  it("works for scope 'both' with switchBranch and edit, naming the move; tools are undone on top of the target", async () => {
    const { s, a } = await drifted();
    const root = (await s.info()).currentBranchId;
    const both = await s.rollback(a.id, { scope: "both", force: true });
    expect(tree()).toEqual(VERSION_A);
    expect(both.branch.id).not.toBe(root);
    await s.invoke("note", { rel: "tool.txt", text: "by a tool\n" }); // a tool's write is not drift
    await s.checkpoint({ name: "with tool" });
    write("b.txt", "edited again\n");

    const switched = await s.switchBranch(root, { scope: "both", force: true });
    expect(switched.undone.map((t) => t.tool)).toEqual(["note"]);
    expect(tree()).toEqual(DRIFTED);
    const savedSwitch = (await s.restore(switched.savedDrift!.checkpointId)).checkpoint;
    expect([savedSwitch.name, savedSwitch.branchId]).toEqual(["forced: drift before switch", both.branch.id]);
    expect(switched.savedDrift!.files).toEqual(["b.txt"]);

    write("a.txt", "again\n");
    const later = (await s.history())[1]!;
    const edited = await s.edit(later.id, { role: "assistant", content: "instead" }, { scope: "both", force: true });
    expect(edited.message.content).toBe("instead");
    expect((await s.restore(edited.savedDrift!.checkpointId)).checkpoint.name).toBe("forced: drift before edit");
    expect(edited.savedDrift!.files).toEqual(["a.txt"]);
    expect(tree()).toEqual(VERSION_A);
  });

  it("with nothing drifted, saves nothing", async () => {
    for (const [rel, text] of Object.entries(VERSION_A)) write(rel, text);
    const s = await fp.createSession({ userId: "alice" });
    await s.attachWorkspace(ws);
    const a = await s.checkpoint({ name: "A" });
    const count = (await fp.listCheckpoints({ userId: "alice" })).items.length;
    const result = await s.rollback(a.id, { scope: "files", force: true });
    expect(result.savedDrift).toBeUndefined();
    expect((await fp.listCheckpoints({ userId: "alice" })).items.length).toBe(count);
  });

  it("validates force, and refuses it in a session without a workspace, leaving the database unchanged", async () => {
    const { s, a } = await drifted();
    const bare = await fp.createSession({ userId: "alice" });
    await bare.append({ role: "user", content: "hi" });
    const at = await bare.checkpoint({ name: "at" });
    await bare.append({ role: "assistant", content: "later" });
    const before = await dumpOf(dbFile);
    const bad = await rejectionOf(s.rollback(a.id, { scope: "files", force: "yes" as never }));
    expect(bad).toBeInstanceOf(ValidationError);
    expect(bad.field).toBe("force");
    // A "conversation" move runs tools on the workspace too (its drift check, see conversation-rewind-drift.test.ts).
    const noWorkspace = await rejectionOf(bare.rollback(at.id, { force: true }));
    expect(noWorkspace).toBeInstanceOf(ValidationError);
    expect(noWorkspace.field).toBe("force");
    expect((await rejectionOf(bare.switchBranch((await bare.info()).currentBranchId, { scope: "conversation", force: true }))).field).toBe(
      "force",
    );
    expect(await dumpOf(dbFile)).toEqual(before);
    expect(tree()).toEqual(DRIFTED);
  });

  it("still never writes through a symbolic link: refused before the drift is saved", async () => {
    const { s, a } = await drifted();
    const outside = path.join(dir, "outside");
    fs.mkdirSync(outside);
    fs.rmSync(path.join(ws, "sub"), { recursive: true });
    fs.symlinkSync(outside, path.join(ws, "sub"));
    const before = await dumpOf(dbFile);
    const e = await rejectionOf(s.rollback(a.id, { scope: "files", force: true }));
    expect(e).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(e.message).toContain("symbolic link");
    expect(await dumpOf(dbFile)).toEqual(before);
    expect(fs.readdirSync(outside)).toEqual([]);
  });
});

describe("a forced move that cannot finish", () => {
  /** A tool whose undo waits for `release()` (and signals `entered`), or throws while `failing` is set. */
  function gatedNote() {
    let release!: () => void;
    let entered!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const inUndo = new Promise<void>((r) => (entered = r));
    const state = { failing: false, gated: false };
    const tool = defineTool<{ rel: string; text: string }, null>({
      name: "gated",
      run: async ({ rel, text }) => (write(rel, text), null),
      undo: async ({ args }) => {
        if (state.failing) throw new Error("undo refused");
        if (state.gated) {
          entered();
          await gate;
        }
        fs.rmSync(path.join(ws, args.rel), { force: true });
      },
    });
    return { tool, release, inUndo, state };
  }

  it("while another opener's move runs its tools, is refused before it saves or overwrites anything", async () => {
    const g = gatedNote();
    await fp.close();
    fp = openForkpoint({ path: dbFile, tools: [note, g.tool] });
    const other = openForkpoint({ path: dbFile, tools: [note, g.tool] });
    try {
      const { s, a } = await drifted();
      await s.invoke("gated", { rel: "tool.txt", text: "by a tool\n" });
      g.state.gated = true;
      const moving = s.rollback(a.id); // conversation only: its undo is now running, in this opener
      await g.inUndo;
      const before = await dumpOf(dbFile);
      const files = tree();
      const same = await other.getSession(s.id, { userId: "alice" });
      for (const scope of ["files", "both"] as const) {
        const e = await rejectionOf(same.rollback(a.id, { scope, force: true }));
        expect(e).toBeInstanceOf(ConflictError);
        expect(e.code).toBe("MOVE_IN_PROGRESS");
        expect(e.savedDrift).toBeUndefined();
      }
      expect(await dumpOf(dbFile)).toEqual(before);
      expect(tree()).toEqual(files);
      g.release();
      expect((await moving).undone.map((t) => t.tool)).toEqual(["gated"]);
    } finally {
      g.release();
      await other.close();
    }
  });

  it("when an undo fails (stop policy), the error says where the drift was saved; calling it again finishes", async () => {
    const g = gatedNote();
    await fp.close();
    fp = openForkpoint({ path: dbFile, tools: [note, g.tool] });
    const { s, a } = await drifted();
    await s.invoke("gated", { rel: "tool.txt", text: "by a tool\n" });
    write("a.txt", DRIFTED["a.txt"]);
    g.state.failing = true;
    const e = await rejectionOf(s.rollback(a.id, { scope: "both", force: true }));
    expect(e).toMatchObject({ code: "UNDO_FAILED", tool: "gated" });
    expect(e.savedDrift).toEqual({ checkpointId: expect.any(String), files: ["a.txt", "b.txt", "new.txt"] });
    const saved = (await s.restore(e.savedDrift.checkpointId)).checkpoint;
    expect([saved.name, saved.metadata]).toEqual([
      "forced: drift before rollback",
      { forkpoint: "saved-drift", move: "rollback", drifted: ["a.txt", "b.txt", "new.txt"] },
    ]);
    expect(await s.diffFiles(saved.id, a.id)).toMatchObject({ added: ["b.txt"], modified: ["a.txt"], deleted: ["new.txt", "tool.txt"] });

    // The files were restored before the undo failed; the same call goes on from there, with nothing more to save.
    g.state.failing = false;
    const again = await s.rollback(a.id, { scope: "both", force: true });
    expect(again.savedDrift).toBeUndefined();
    expect(again.undone.map((t) => t.tool)).toEqual(["gated"]);
    expect(tree()).toEqual(VERSION_A);
  });
});

describe("a crash during a forced move", () => {
  async function crashAt(s: SessionHandle, a: Checkpoint, scope: "files" | "both", at: "saved" | "restoring"): Promise<void> {
    await fp.close();
    const child = spawn(process.execPath, [...nodeArgs(WORKER), dbFile, s.id, a.id, scope, at], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    const [, signal] = (await new Promise((done) => child.once("exit", (...r) => done(r)))) as [number | null, string | null];
    expect([signal, out]).toEqual(["SIGKILL", ""]);
  }
  const savedCheckpoint = async (s: SessionHandle) =>
    (await fp.listCheckpoints({ userId: "alice", sessionId: s.id })).items.find((c) => c.name === "forced: drift before rollback")!;

  it("right after the drift is saved: the directory is as it was, and the saved checkpoint holds it", async () => {
    const { s, a } = await drifted();
    await crashAt(s, a, "files", "saved");
    expect(await journalOf(s.id)).toBeNull();
    expect(tree()).toEqual(DRIFTED);
    fp = openForkpoint({ path: dbFile, tools: [note] });
    const again = await fp.getSession(s.id, { userId: "alice" });
    const saved = await savedCheckpoint(again);
    expect(await again.diffFiles(saved.id, "disk")).toMatchObject({ added: [], modified: [], deleted: [] });
    // What forkpoint last saw is now the saved drift: the move needs no force any more.
    await again.rollback(a.id, { scope: "files" });
    expect(tree()).toEqual(VERSION_A);
    await again.rollback(saved.id, { scope: "files" });
    expect(tree()).toEqual(DRIFTED);
  });

  it("in the middle of the restore: recovery finishes it (and a 'both' move's conversation), and the drift stays saved", async () => {
    for (const scope of ["files", "both"] as const) {
      const { s, a } = await drifted();
      await crashAt(s, a, scope, "restoring");
      expect(await journalOf(s.id)).not.toBeNull();
      fp = openForkpoint({ path: dbFile, tools: [note] });
      await fp.ready;
      expect(await journalOf(s.id)).toBeNull();
      expect(tree()).toEqual(VERSION_A);
      const again = await fp.getSession(s.id, { userId: "alice" });
      // "both" journals its conversation's move before the files: recovery resumes it once the files are restored
      // (on PostgreSQL once the dead process's lease has run out).
      const forkedAt = async () => (await again.branches()).find((b) => b.current)!.forkCheckpointId;
      if (scope === "both") while ((await fp.recover()).waiting.length > 0) await sleep(100);
      expect(await forkedAt()).toBe(scope === "both" ? a.id : null);
      const saved = await savedCheckpoint(again);
      const d = await again.diffFiles(a.id, saved.id);
      expect([d.added, d.modified, d.deleted]).toEqual([["new.txt"], ["a.txt"], ["b.txt"]]);
      await again.rollback(saved.id, { scope: "files" });
      expect(tree()).toEqual(DRIFTED);
      expect(await fp.verify()).toMatchObject({ ok: true });
      await fp.close();
      fs.rmSync(ws, { recursive: true });
      fs.mkdirSync(ws);
      fp = openForkpoint({ path: dbFile, tools: [note] });
    }
  });
});
