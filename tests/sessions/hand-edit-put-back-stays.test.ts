// A hand edit a call's undo puts back stays as put back for the rest of the move: an earlier call of the same move that
// also wrote that file does not overwrite or delete it on undo. Kept as drift, listed in `files.kept`, with a watcher
// or without, and in a move a crash interrupted, once recovered.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { defineTool, type Forkpoint, type SessionHandle } from "../../src/index.js";
import { engineOf } from "../../src/sessions/forkpoint.js";
import { workspaceStateFor } from "../../src/sessions/workspace/state.js";
import { watchableFileSystem } from "../../src/sessions/workspace/watch.js";
import { readOrNull, tempDir, writeFileTool, type WriteArgs, type WriteResult } from "../fixtures/file-tools.js";
import { expireLeases } from "../fixtures/backend.js";
import { startWorker } from "../fixtures/workers.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const WORKER = fileURLToPath(new URL("../fixtures/stalled-move.ts", import.meta.url));
const watched = watchableFileSystem(os.tmpdir());

const put = (p: string, text: string | null) => (text === null ? fs.rmSync(p, { force: true }) : fs.writeFileSync(p, text));

const removeFile = defineTool<{ path: string }, { previous: string | null }>({
  name: "delete_file",
  effects: "workspace",
  run: ({ path: p }) => {
    const previous = readOrNull(p);
    fs.rmSync(p, { force: true });
    return { previous };
  },
  undo: ({ args, result }) => put(args.path, result.previous),
});

const renameFile = defineTool<{ from: string; to: string }, { from: string | null; to: string | null }>({
  name: "rename_file",
  effects: "workspace",
  run: ({ from, to }) => {
    const was = { from: readOrNull(from), to: readOrNull(to) };
    if (was.from !== null) fs.renameSync(from, to);
    return was;
  },
  undo: ({ args, result }) => {
    put(args.from, result.from);
    put(args.to, result.to);
  },
});

/** Records a note outside the workspace; recorded with `recordToolCall`, so no record of its files. */
const notes: string[] = [];
const note = defineTool<{ text: string }, { ok: boolean }>({
  name: "note",
  run: ({ text }) => {
    notes.push(text);
    return { ok: true };
  },
  undo: ({ args }) => {
    notes.push(`un${args.text}`);
  },
});

/** Makes folder `dir` with an index file; its undo deletes the whole folder (beyond the paths its run changed). */
const scaffold = defineTool<{ dir: string }, { had: boolean }>({
  name: "scaffold",
  effects: "workspace",
  run: ({ dir }) => {
    const had = fs.existsSync(dir);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "index.ts"), "export {}");
    return { had };
  },
  undo: ({ args, result }) => {
    if (!result.had) fs.rmSync(args.dir, { recursive: true, force: true });
  },
});

/** Writes `path` after reading what `snap` hold; its undo restores those snapshots, beyond the paths its run changed. */
const snapWrite = defineTool<WriteArgs & { snap: string[] }, Record<string, string | null>>({
  name: "snap_write",
  effects: "workspace",
  run: (args) => {
    const snapshot = Object.fromEntries(args.snap.map((p) => [p, readOrNull(p)]));
    fs.writeFileSync(args.path, args.text);
    return snapshot;
  },
  undo: ({ result }) => {
    for (const [p, text] of Object.entries(result)) put(p, text);
  },
});

/** In this process stall_write only writes (its undo stalls in the child, tests/fixtures/stalled-move.ts). */
const stallWrite = defineTool<WriteArgs, WriteResult>({
  name: "stall_write",
  run: (args) => {
    fs.writeFileSync(args.path, args.text);
    return { previous: null };
  },
  undo: ({ args }) => fs.rmSync(args.path, { force: true }),
});

/** As the stalled-move worker's (whose undo stalls after it put back what the run found). */
const putBackStall = defineTool<WriteArgs, WriteResult>({
  name: "put_back_stall",
  run: (args) => {
    const previous = readOrNull(args.path);
    fs.writeFileSync(args.path, args.text);
    return { previous };
  },
  undo: ({ args, result }) => put(args.path, result.previous),
});

/** A session on a fresh workspace, checkpointed empty; `walk`: followed without a watcher (every scan walks). */
async function started(walk: boolean, fp?: Forkpoint) {
  const ws = tempDir("forkpoint-put-back-");
  const opened = fp ?? dbs.open({ tools: [removeFile, renameFile, note, scaffold, snapWrite, writeFileTool()] as never[] }).fp;
  const s = await opened.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  if (walk) {
    const state = workspaceStateFor(engineOf(opened).ctx, s.id)!;
    state.watch?.close();
    state.watch = null;
    state.watchable = false;
  }
  const start = await s.checkpoint({ name: "start" });
  return { s, fp: opened, ws, start, file: (rel: string) => path.join(ws, rel) };
}

/** d written, renamed to c, d made again by hand, then deleted by the agent (the reproducer of seed 6). */
async function renamedThenDeleted(s: SessionHandle, file: (rel: string) => string, between?: () => Promise<unknown>) {
  await s.invoke("write_file", { path: file("d"), text: "w" });
  await s.invoke("rename_file", { from: file("d"), to: file("c") });
  await between?.();
  fs.writeFileSync(file("d"), "by hand");
  await s.invoke("delete_file", { path: file("d") });
}

/** d written, then edited by hand, then written back as the first call left it (so no drift is left before the move). */
async function writtenTwice(s: SessionHandle, file: (rel: string) => string, between?: () => Promise<unknown>) {
  await s.invoke("write_file", { path: file("d"), text: "w" });
  await between?.();
  fs.writeFileSync(file("d"), "by hand");
  await s.invoke("write_file", { path: file("d"), text: "w" });
}

for (const walk of [false, true])
  for (const [name, calls] of [
    ["renamed away, made by hand, then deleted", renamedThenDeleted],
    ["written, edited by hand, then written back", writtenTwice],
  ] as const) {
    const how = walk ? "without a watcher" : "with a watcher where there is one";
    it(`${name}: a both rewind keeps the hand edit its undo put back (${how})`, async () => {
      const { s, start, file } = await started(walk);
      await calls(s, file);
      const moved = await s.rollback(start.id, { scope: "both" });
      expect(moved.undone.length).toBeGreaterThan(1);
      expect(moved.files?.kept).toEqual(["d"]);
      expect(readOrNull(file("d"))).toBe("by hand");
      expect(readOrNull(file("c"))).toBeNull();
      // Drift: a files rewind refuses it rather than overwrite it unsaved.
      expect(await rejectionOf(s.rollback(start.id, { scope: "files" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
      expect(readOrNull(file("d"))).toBe("by hand");
    });

    it(`${name}, a recorded call between: a both rewind keeps the hand edit that call left alone (${how})`, async () => {
      const { s, start, file } = await started(walk);
      await calls(s, file, () => s.recordToolCall({ tool: "note", args: { text: "n" }, result: { ok: true } }));
      const moved = await s.rollback(start.id, { scope: "both" });
      expect(moved.undone.map((t) => t.tool)).toContain("note");
      expect(moved.files?.kept).toEqual(["d"]);
      expect(readOrNull(file("d"))).toBe("by hand");
    });

    it(`${name}: a conversation rewind keeps it too (${how})`, async () => {
      const { s, start, file } = await started(walk);
      await calls(s, file);
      await s.rollback(start.id, { scope: "conversation" });
      expect(readOrNull(file("d"))).toBe("by hand");
      expect(readOrNull(file("c"))).toBeNull();
    });
  }

for (const walk of [false, true])
  it(`calls one after another over a hand edit: a forced rewind keeps the hand edit the first one found (${walk ? "without a watcher" : "with a watcher where there is one"})`, async () => {
    const { s, start, file } = await started(walk);
    await s.invoke("write_file", { path: file("d"), text: "w" });
    fs.writeFileSync(file("d"), "by hand");
    // Each finds drift there: the hand edit, then what the call before it left (forkpoint never took it for its own).
    await s.invoke("write_file", { path: file("d"), text: "x" });
    await s.invoke("write_file", { path: file("d"), text: "y" });
    expect(await rejectionOf(s.rollback(start.id, { scope: "both" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
    const moved = await s.rollback(start.id, { scope: "both", force: true });
    expect(moved.savedDrift?.files).toEqual(["d"]);
    expect(moved.files?.kept).toEqual(["d"]);
    expect(readOrNull(file("d"))).toBe("by hand");
  });

for (const walk of [false, true])
  for (const scope of ["conversation", "both"] as const)
    it(`a save after a call over a hand edit, found by a later call: a rewind is refused, forced or not (${scope}, ${walk ? "without a watcher" : "with a watcher where there is one"})`, async () => {
      const { s, start, file } = await started(walk);
      fs.writeFileSync(file("d"), "first save");
      await s.invoke("delete_file", { path: file("d") });
      // Saved after the delete: the next call finds it, and only that call's result holds it.
      fs.writeFileSync(file("d"), "second save");
      await s.invoke("write_file", { path: file("d"), text: "agent" });
      const [older, newer] = await s.toolTrack();
      // The delete's undo would put "first save" back over "second save", which no checkpoint holds.
      for (const force of [false, true]) {
        const refused = (await rejectionOf(s.rollback(start.id, { scope, force }))) as { code: string; message: string };
        expect(refused.code).toBe("WORKSPACE_DRIFT");
        expect(refused.message).toContain(`call ${newer!.id} puts back`);
        expect(readOrNull(file("d"))).toBe("agent");
      }
      expect((await s.plan({ checkpointId: start.id, scope })).blocked).toContain(newer!.id);
      expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true, true]);
      expect(older!.tool).toBe("delete_file");
    });

for (const walk of [false, true]) {
  const how = walk ? "without a watcher" : "with a watcher where there is one";

  it(`a hand edit put back equal to the restored files leaves a later replay's write (${how})`, async () => {
    const { s, file } = await started(walk);
    fs.writeFileSync(file("d"), "v0");
    const cp0 = await s.checkpoint({ name: "cp0" });
    await s.invoke("write_file", { path: file("d"), text: "a" });
    await s.append({ role: "assistant", content: "A" });
    await s.rollback(cp0.id, { scope: "both" });
    await s.invoke("write_file", { path: file("d"), text: "b" });
    fs.writeFileSync(file("d"), "v0");
    await s.invoke("write_file", { path: file("d"), text: "b" });
    // Back to A: B's calls undone (the second puts "v0" back, a hand edit), cp0's files restored, A's write replayed.
    const moved = await s.undo({ scope: "both" });
    expect(moved.replayed.map((t) => t.tool)).toEqual(["write_file"]);
    expect(readOrNull(file("d"))).toBe("a");
    expect((await s.toolTrack()).map((t) => [t.args, t.applied])).toEqual([[{ path: file("d"), text: "a" }, true]]);
  });

  it(`the undo of a replayed application puts back what the replay found, not its first run's hand edit (${how})`, async () => {
    const { s, file } = await started(walk);
    fs.writeFileSync(file("d"), "v0");
    const cp0 = await s.checkpoint({ name: "cp0" });
    await s.invoke("write_file", { path: file("d"), text: "w" });
    fs.writeFileSync(file("d"), "by hand");
    await s.invoke("write_file", { path: file("d"), text: "x" });
    const [m1] = await s.append({ role: "assistant", content: "m1" });
    await s.checkpoint({ name: "x" });
    await s.edit(m1!.id, { content: "m1'" }, { scope: "both" });
    const edited = (await s.info()).currentBranchId;
    // The first runs undone: the second's puts the hand edit back, which stays.
    expect((await s.rollback(cp0.id, { scope: "both" })).files?.kept).toEqual(["d"]);
    expect(readOrNull(file("d"))).toBe("by hand");
    await s.checkpoint({ name: "kept" });
    // Both replayed over the files of cp0: the second replay finds the first's "w", no hand edit.
    expect((await s.switchBranch(edited, { scope: "both" })).replayed).toHaveLength(2);
    expect(readOrNull(file("d"))).toBe("x");
    const moved = await s.rollback(cp0.id, { scope: "both" });
    expect(moved.undone).toHaveLength(2);
    expect(moved.files?.kept ?? []).toEqual([]);
    expect(readOrNull(file("d"))).toBe("v0");
  });

  for (const force of [false, true])
    it(`the undo of a replay over the hand edit a conversation rewind put back puts it back, kept (${force ? "forced" : "deleted since"}, ${how})`, async () => {
      const { s, start, file } = await started(walk);
      fs.writeFileSync(file("d"), "by hand");
      await s.invoke("write_file", { path: file("d"), text: "w" });
      // The rewind puts the hand edit back; its undo replays the call over it (its result holds the hand edit again).
      await s.rollback(start.id, { scope: "conversation" });
      await s.undo({ scope: "conversation", force: true });
      expect(readOrNull(file("d"))).toBe("w");
      // The agent deletes d (no drift left on disk), or the move is forced over the call's "w".
      if (!force) await s.invoke("delete_file", { path: file("d") });
      const moved = await s.rollback(start.id, { scope: "both", force });
      expect(moved.files?.kept).toEqual(["d"]);
      expect(readOrNull(file("d"))).toBe("by hand");
    });

  it(`a save by hand to a put-back file between later undos stays, drift, held from then on (${how})`, async () => {
    const { s, fp, start, file } = await started(walk);
    await s.invoke("write_file", { path: file("d"), text: "w" });
    await s.invoke("write_file", { path: file("e"), text: "e" });
    fs.writeFileSync(file("d"), "by hand");
    await s.invoke("write_file", { path: file("d"), text: "w" });
    // The last write's undo puts "by hand" back; then, before the next undo starts, the user saves d again.
    let undos = 0;
    fp.on("undo", () => {
      if (++undos === 1) fs.writeFileSync(file("d"), "typed during the move");
    });
    const moved = await s.rollback(start.id, { scope: "conversation" });
    expect(moved.undone).toHaveLength(3);
    // The first write's undo, which deletes d, leaves the user's save.
    expect(readOrNull(file("d"))).toBe("typed during the move");
    expect(readOrNull(file("e"))).toBeNull();
  });

  it(`a save by hand between undos stays where an older undo puts back an older hand edit (${how})`, async () => {
    const { s, fp, start, file } = await started(walk);
    await s.invoke("write_file", { path: file("d"), text: "w1" });
    fs.writeFileSync(file("d"), "h1");
    await s.invoke("write_file", { path: file("d"), text: "w2" });
    await s.invoke("write_file", { path: file("d"), text: "w3" });
    // The last write's undo puts "w2" back (drift, over "h1"); the user then saves d before the next undo, which would
    // put "h1" back.
    let undos = 0;
    fp.on("undo", () => {
      if (++undos === 1) fs.writeFileSync(file("d"), "saved between");
    });
    const moved = await s.rollback(start.id, { scope: "conversation" });
    expect(moved.undone).toHaveLength(3);
    expect(readOrNull(file("d"))).toBe("saved between");
  });

  it(`a deletion by hand between undos stays where an older undo puts back an older hand edit (${how})`, async () => {
    const { s, fp, start, file } = await started(walk);
    await s.invoke("write_file", { path: file("d"), text: "w1" });
    fs.writeFileSync(file("d"), "h1");
    await s.invoke("write_file", { path: file("d"), text: "w2" });
    await s.invoke("write_file", { path: file("d"), text: "w3" });
    let undos = 0;
    fp.on("undo", () => {
      if (++undos === 1) fs.rmSync(file("d"));
    });
    const moved = await s.rollback(start.id, { scope: "conversation" });
    expect(moved.undone).toHaveLength(3);
    expect(readOrNull(file("d"))).toBeNull();
  });

  it(`a put-back file deleted by hand between later undos stays deleted (${how})`, async () => {
    const { s, fp, file } = await started(walk);
    fs.writeFileSync(file("d"), "v0");
    const start = await s.checkpoint({ name: "v0" });
    await s.invoke("write_file", { path: file("e"), text: "e" });
    fs.writeFileSync(file("d"), "by hand");
    await s.invoke("write_file", { path: file("d"), text: "w" });
    // The write to d is undone first (it puts "by hand" back); the user then deletes d before e's undo starts.
    let undos = 0;
    fp.on("undo", () => {
      if (++undos === 1) fs.rmSync(file("d"));
    });
    expect((await s.rollback(start.id, { scope: "conversation" })).undone).toHaveLength(2);
    expect(readOrNull(file("d"))).toBeNull();
    expect(readOrNull(file("e"))).toBeNull();
  });

  // A save by hand made while an undo runs cannot be told from that undo's write (see put-back.ts): not tested.

  for (const scope of ["conversation", "both"] as const)
    it(`an older undo restoring a snapshot beyond its recorded paths leaves the hand edit put back (${scope}, ${how})`, async () => {
      const { s, file } = await started(walk);
      fs.writeFileSync(file("d"), "v0");
      const start = await s.checkpoint({ name: "v0" });
      await s.invoke("snap_write", { path: file("a"), text: "a", snap: [file("a"), file("d")] });
      await s.invoke("write_file", { path: file("d"), text: "w" });
      fs.writeFileSync(file("d"), "by hand");
      await s.invoke("write_file", { path: file("d"), text: "w" });
      // The last write's undo puts "by hand" back; snap_write's restores d to "v0" (its run changed only a).
      const moved = await s.rollback(start.id, scope === "both" ? { scope, force: true } : { scope });
      expect(moved.undone.map((t) => t.tool)).toEqual(["write_file", "write_file", "snap_write"]);
      if (scope === "both") expect(moved.files?.kept).toEqual(["d"]);
      expect(readOrNull(file("d"))).toBe("by hand");
      expect(readOrNull(file("a"))).toBeNull();
    });

  it(`an older undo deleting beyond its recorded paths leaves a hand-made file put back there (${how})`, async () => {
    const { s, start, file } = await started(walk);
    await s.invoke("scaffold", { dir: file("sub") });
    fs.writeFileSync(file("sub/notes.md"), "my notes");
    await s.invoke("delete_file", { path: file("sub/notes.md") });
    const moved = await s.rollback(start.id, { scope: "both" });
    expect(moved.undone.map((t) => t.tool)).toEqual(["delete_file", "scaffold"]);
    expect(moved.files?.kept).toEqual(["sub/notes.md"]);
    expect(readOrNull(file("sub/notes.md"))).toBe("my notes");
    expect(readOrNull(file("sub/index.ts"))).toBeNull();
  });
}

it.skipIf(!watched)("a both rewind killed after the undo that put the hand edit back keeps it once recovered", async () => {
  const db = dbs.path();
  const fp = dbs.open({ path: db, tools: [writeFileTool(), stallWrite] as never[] }).fp;
  const { s, start, file } = await started(false, fp);
  await s.invoke("write_file", { path: file("d"), text: "w" });
  await s.invoke("stall_write", { path: file("e"), text: "e" });
  fs.writeFileSync(file("d"), "by hand");
  await s.invoke("write_file", { path: file("d"), text: "w" });
  await fp.close();

  // Undone last first: write_file's undo puts "by hand" back, then stall_write's undo stalls and the child is killed.
  const marker = path.join(path.dirname(db), "stalled");
  const w = startWorker(WORKER, [db, s.id, "rollback", start.id, "both", marker]);
  while (!fs.existsSync(marker) && w.child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
  w.child.kill("SIGKILL");
  expect((await w.done).stderr).toBe("");
  expect(readOrNull(file("d"))).toBe("by hand");
  await expireLeases(db);

  // Recovery undoes the first write_file, which would delete d: the hand edit stays. The interrupted undo may have
  // made that drift, so the files step is refused (as drift-in-move.ts says), with d left as it is.
  const again = dbs.open({ path: db, tools: [writeFileTool(), stallWrite] as never[], recover: false }).fp;
  const report = await again.recover();
  expect(report.resumed).toEqual([]);
  expect(report.failed).toHaveLength(1);
  expect(report.failed[0]!.error).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(report.failed[0]!.error.message).toContain("(d)");
  expect(readOrNull(file("d"))).toBe("by hand");
  expect(readOrNull(file("e"))).toBe("e");
});

it.skipIf(!watched)("a hand edit recovery's resumed undo put back stays when the same move is called again", async () => {
  const db = dbs.path();
  const fp = dbs.open({ path: db, tools: [writeFileTool(), stallWrite] as never[] }).fp;
  const { s, start, file } = await started(false, fp);
  await s.invoke("write_file", { path: file("d"), text: "w" });
  fs.writeFileSync(file("d"), "by hand");
  await s.invoke("write_file", { path: file("d"), text: "w" });
  await s.invoke("stall_write", { path: file("e"), text: "e" });
  await fp.close();

  // stall_write's undo (the first) stalls and the child is killed; recovery's resumed undo of the second write_file
  // puts "by hand" back, the first's leaves it, and the files step refuses the drift the interrupted step may have made.
  const marker = path.join(path.dirname(db), "stalled");
  const w = startWorker(WORKER, [db, s.id, "rollback", start.id, "both", marker]);
  while (!fs.existsSync(marker) && w.child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
  w.child.kill("SIGKILL");
  expect((await w.done).stderr).toBe("");
  expect(readOrNull(file("d"))).toBe("w");
  await expireLeases(db);
  const again = dbs.open({ path: db, tools: [writeFileTool(), stallWrite] as never[], recover: false }).fp;
  const report = await again.recover();
  expect(report.failed).toHaveLength(1);
  expect(readOrNull(file("d"))).toBe("by hand");

  // The same move called again keeps the put-back as the move without a crash does: left as it is, listed kept.
  const s2 = await again.getSession(s.id, { userId: "u" });
  expect(report.unknown.map((t) => t.tool)).toEqual(["stall_write"]);
  await s2.resolveToolCall(report.unknown[0]!.id, { status: "failed", error: "it stalled before writing" });
  const plan = await s2.plan({ checkpointId: start.id, scope: "both" });
  expect(plan.files?.kept).toEqual(["d"]);
  expect(plan.drift).not.toContain("d");
  const moved = await s2.rollback(start.id, { scope: "both", force: true });
  expect(moved.files?.kept).toEqual(["d"]);
  expect(moved.savedDrift?.files ?? []).not.toContain("d");
  expect(readOrNull(file("d"))).toBe("by hand");
});

it.skipIf(!watched)(
  "killed after the undos of the put-back and of a call without recorded paths: recovery keeps the hand edit",
  async () => {
    const db = dbs.path();
    const fp = dbs.open({ path: db, tools: [writeFileTool(), stallWrite, note] as never[] }).fp;
    const { s, start, file } = await started(false, fp);
    await s.invoke("write_file", { path: file("d"), text: "w" });
    await s.invoke("stall_write", { path: file("e"), text: "e" });
    await s.recordToolCall({ tool: "note", args: { text: "n" }, result: { ok: true } });
    fs.writeFileSync(file("d"), "by hand");
    await s.invoke("write_file", { path: file("d"), text: "w" });
    await fp.close();

    // write_file's undo puts "by hand" back, note's undo (no recorded paths) writes nothing, stall_write's stalls.
    const marker = path.join(path.dirname(db), "stalled");
    const w = startWorker(WORKER, [db, s.id, "rollback", start.id, "both", marker]);
    while (!fs.existsSync(marker) && w.child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
    w.child.kill("SIGKILL");
    expect((await w.done).stderr).toBe("");
    expect(readOrNull(file("d"))).toBe("by hand");
    await expireLeases(db);

    // Which paths note's undo changed is not known after the crash: d is held as it is on disk, the hand edit.
    const again = dbs.open({ path: db, tools: [writeFileTool(), stallWrite, note] as never[], recover: false }).fp;
    const report = await again.recover();
    expect(report.failed).toHaveLength(1);
    expect(report.failed[0]!.error).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(readOrNull(file("d"))).toBe("by hand");
  },
);

it.skipIf(!watched)(
  "killed in a step that writes the put-back file: recovery refuses the drift before an older undo deletes it",
  async () => {
    const db = dbs.path();
    const fp = dbs.open({ path: db, tools: [writeFileTool(), stallWrite] as never[] }).fp;
    const { s, start, file } = await started(false, fp);
    await s.invoke("write_file", { path: file("d"), text: "w" });
    await s.invoke("stall_write", { path: file("d"), text: "s" });
    fs.writeFileSync(file("d"), "by hand");
    await s.invoke("write_file", { path: file("d"), text: "s" });
    await fp.close();

    // write_file's undo puts "by hand" back; stall_write's undo, whose run wrote d too, stalls there.
    const marker = path.join(path.dirname(db), "stalled");
    const w = startWorker(WORKER, [db, s.id, "rollback", start.id, "both", marker]);
    while (!fs.existsSync(marker) && w.child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
    w.child.kill("SIGKILL");
    expect((await w.done).stderr).toBe("");
    expect(readOrNull(file("d"))).toBe("by hand");
    await expireLeases(db);

    // The first write_file's undo would delete d: what d holds stays (the hand edit, or the interrupted step's doing),
    // and the files step refuses it as drift.
    const again = dbs.open({ path: db, tools: [writeFileTool(), stallWrite] as never[], recover: false }).fp;
    const report = await again.recover();
    expect(report.failed).toHaveLength(1);
    expect(report.failed[0]!.error).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(report.failed[0]!.error.message).toContain("(d)");
    expect(readOrNull(file("d"))).toBe("by hand");
  },
);

it.skipIf(!watched)("a hand edit put back by the undo a kill interrupted stays when the same move is called again", async () => {
  const db = dbs.path();
  const tools = [writeFileTool(), putBackStall] as never[];
  const fp = dbs.open({ path: db, tools }).fp;
  const { s, start, file } = await started(false, fp);
  fs.writeFileSync(file("d"), "by hand");
  await s.invoke("put_back_stall", { path: file("d"), text: "w" });
  await s.invoke("write_file", { path: file("b"), text: "b" });
  await fp.close();

  // Forced (d's call left drift there): write_file's undo, then put_back_stall's puts "by hand" back and stalls: killed
  // there, its step journaled no put-back.
  const marker = path.join(path.dirname(db), "stalled");
  const w = startWorker(WORKER, [db, s.id, "rollback", start.id, "both", marker, "force"]);
  while (!fs.existsSync(marker) && w.child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
  w.child.kill("SIGKILL");
  expect((await w.done).stderr).toBe("");
  expect(readOrNull(file("d"))).toBe("by hand");
  await expireLeases(db);
  const again = dbs.open({ path: db, tools, recover: false }).fp;
  const report = await again.recover();
  expect(report.unknown.map((t) => t.tool)).toEqual(["put_back_stall"]);
  const s2 = await again.getSession(s.id, { userId: "u" });
  await s2.resolveToolCall(report.unknown[0]!.id, { status: "succeeded", result: null });

  // Called again, forced or not, the move keeps it as the move without a crash does: left as it is, listed kept.
  const plan = await s2.plan({ checkpointId: start.id, scope: "both" });
  expect(plan.files?.kept).toEqual(["d"]);
  expect(plan.drift).not.toContain("d");
  const moved = await s2.rollback(start.id, { scope: "both", force: true });
  expect(moved.files?.kept).toEqual(["d"]);
  expect(moved.savedDrift?.files ?? []).not.toContain("d");
  expect(readOrNull(file("d"))).toBe("by hand");
});
