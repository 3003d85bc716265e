// A "conversation" move that undoes or replays a call recorded with `recordToolCall` on a session with a workspace:
// what the files held where its arguments name as it was recorded is kept, so a file there changed by hand since is
// drift its undo or replay would write over: refused (WORKSPACE_DRIFT, nothing changed), listed by `plan`, or saved
// first when forced. The call's own write (drift as forkpoint never saw it) refuses nothing.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { dumpOf } from "../fixtures/backend.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** A session with a workspace, checkpointed at c0; b.txt then written elsewhere and recorded. */
async function setup() {
  const ws = tempDir("forkpoint-conv-recorded-");
  const { fp, path: db } = dbs.open({ tools: [writeFileTool()] as never[] });
  const s = await fp.createSession({ userId: "u" });
  fs.writeFileSync(path.join(ws, "a.txt"), "v0\n");
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  const branch = (await s.info()).currentBranchId;
  const b = path.join(ws, "b.txt");
  fs.writeFileSync(b, "B\n");
  await s.recordToolCall({ tool: "write_file", args: { path: b, text: "B\n" }, result: { previous: null } });
  return { s, ws, db, c0, b, branch };
}

/** Refused with WORKSPACE_DRIFT, the file and the database unchanged. */
async function refusedUnchanged(db: string, at: string, move: () => Promise<unknown>) {
  const before = { dump: await dumpOf(db), file: readOrNull(at) };
  expect(await rejectionOf(move())).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect({ dump: await dumpOf(db), file: readOrNull(at) }).toEqual(before);
}

it("a hand edit of a recorded call's file: the rewind is refused and plan lists it; forced, it is saved first", async () => {
  const { s, db, c0, b } = await setup();
  fs.writeFileSync(b, "my own edit\n");
  expect((await s.plan({ checkpointId: c0.id })).drift).toEqual(["b.txt"]);
  await refusedUnchanged(db, b, () => s.rollback(c0.id));
  expect(readOrNull(b)).toBe("my own edit\n");
  const forced = await s.rollback(c0.id, { force: true });
  expect(forced.savedDrift?.files).toEqual(["b.txt"]);
  expect(readOrNull(b)).toBeNull();
  expect((await s.diffFiles(c0.id, forced.savedDrift!.checkpointId)).patch).toContain("+my own edit");
});

it("no hand edit: the rewind runs the recorded call's undo, and plan lists no drift", async () => {
  const { s, c0, b } = await setup();
  expect((await s.plan({ checkpointId: c0.id })).drift).toEqual([]);
  const moved = await s.rollback(c0.id);
  expect(moved.savedDrift).toBeUndefined();
  expect(readOrNull(b)).toBeNull();
  expect(moved.undone.map((t) => t.tool)).toEqual(["write_file"]);
});

it("a file made by hand where a rewound recorded call writes: the replay back is refused", async () => {
  const { s, db, c0, b, branch } = await setup();
  await s.rollback(c0.id);
  fs.writeFileSync(b, "made by hand\n");
  await refusedUnchanged(db, b, () => s.switchBranch(branch));
  expect(readOrNull(b)).toBe("made by hand\n");
});

it("a recorded call over a file a tool call wrote: its own write is no drift to the rewind", async () => {
  const { s, ws, c0 } = await (async () => {
    const ws = tempDir("forkpoint-conv-recorded-");
    const { fp } = dbs.open({ tools: [writeFileTool()] as never[] });
    const s = await fp.createSession({ userId: "u" });
    fs.writeFileSync(path.join(ws, "a.txt"), "v0\n");
    await s.attachWorkspace(ws);
    await s.append({ role: "user", content: "go" });
    return { s, ws, c0: await s.checkpoint({ name: "c0" }) };
  })();
  const a = path.join(ws, "a.txt");
  await s.invoke("write_file", { path: a, text: "by the tool\n" });
  fs.writeFileSync(a, "recorded\n");
  await s.recordToolCall({ tool: "write_file", args: { path: a, text: "recorded\n" }, result: { previous: "by the tool\n" } });
  expect((await s.plan({ checkpointId: c0.id })).drift).toEqual([]);
  await s.rollback(c0.id);
  expect(readOrNull(a)).toBe("v0\n");
});

// A coding agent's shell run in the project (`cwd`: the workspace) of more files than a record lists: the files that had
// drifted as it was recorded (its own writes) are kept, so a file there changed since is still told apart.
it("a recorded call naming a folder of over 1,000 files: a hand edit since is refused, its own write is not", async () => {
  const ws = tempDir("forkpoint-conv-recorded-");
  const { fp, path: db } = dbs.open({ tools: [writeFileTool()] as never[] });
  const s = await fp.createSession({ userId: "u" });
  fs.mkdirSync(path.join(ws, "src"));
  const file = (i: number) => path.join(ws, "src", `f${i}.ts`);
  for (let i = 0; i < 1_200; i++) fs.writeFileSync(file(i), `${i}\n`);
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  fs.writeFileSync(file(1), "by the shell\n");
  const args = { path: file(1), text: "by the shell\n", cwd: ws };
  await s.recordToolCall({ tool: "write_file", args, result: { previous: "1\n" } });
  fs.writeFileSync(file(2), "my own edit\n");
  expect((await s.plan({ checkpointId: c0.id })).drift).toEqual(["src/f2.ts"]);
  await refusedUnchanged(db, file(2), () => s.rollback(c0.id));
  fs.writeFileSync(file(2), "2\n");
  expect((await s.plan({ checkpointId: c0.id })).drift).toEqual([]);
  expect((await s.rollback(c0.id)).undone.map((t) => t.tool)).toEqual(["write_file"]);
  expect(readOrNull(file(1))).toBe("1\n");
});

// A recorded call naming the workspace as a folder (a shell's `cwd`) is not taken to have written each file there: a
// hand edit made before it, over a file an older call wrote, is refused by that call's undo, not written over.
it("a hand edit before a recorded call that names its folder only: the older call's undo is refused", async () => {
  for (const first of ["invoked", "recorded"] as const) {
    const { s, db, c0, b } = await setup();
    const ws = path.dirname(b);
    const a = path.join(ws, "a.txt");
    if (first === "invoked") await s.invoke("write_file", { path: a, text: "by the tool\n" });
    else {
      fs.writeFileSync(a, "by the tool\n");
      await s.recordToolCall({ tool: "write_file", args: { path: a, text: "by the tool\n" }, result: { previous: "v0\n" } });
    }
    fs.writeFileSync(a, "my own edit\n");
    const c = path.join(ws, "c.txt");
    fs.writeFileSync(c, "C\n");
    await s.recordToolCall({ tool: "write_file", args: { path: c, text: "C\n", cwd: ws }, result: { previous: null } });
    expect((await s.plan({ checkpointId: c0.id })).drift).toEqual(["a.txt"]);
    await refusedUnchanged(db, a, () => s.rollback(c0.id));
    expect(readOrNull(a)).toBe("my own edit\n");
  }
});

// A recorded call naming a link to a file in the workspace writes that file through it: a hand edit there since is drift.
it("a recorded call naming a link to a file: a hand edit of the file since is refused", async () => {
  const { s, db, c0, b } = await setup();
  const ws = path.dirname(b);
  const a = path.join(ws, "a.txt");
  const link = path.join(ws, "link.txt");
  fs.symlinkSync("a.txt", link);
  fs.writeFileSync(link, "through the link\n");
  await s.recordToolCall({ tool: "write_file", args: { path: link, text: "through the link\n" }, result: { previous: "v0\n" } });
  fs.writeFileSync(a, "my own edit\n");
  expect((await s.plan({ checkpointId: c0.id })).drift).toEqual(["a.txt"]);
  await refusedUnchanged(db, a, () => s.rollback(c0.id));
  expect(readOrNull(a)).toBe("my own edit\n");
});

// What a recorded call's undo puts back is its result's to say: a hand edit made before it, over a file an older call
// wrote, cannot be told from that call's write before the move. The older call's undo, next to write there, finds the
// file holding other than what its call left: the move stops there, the hand edit on disk, until a checkpoint keeps it.
/** A session with a workspace at c0, a.txt written by a tool call, edited by hand, then written by a recorded call. */
async function handEditUnderRecorded(checkpointAfter = false) {
  const ws = tempDir("forkpoint-conv-recorded-");
  const { fp } = dbs.open({ tools: [writeFileTool()] as never[] });
  const s = await fp.createSession({ userId: "u" });
  const a = path.join(ws, "a.txt");
  fs.writeFileSync(a, "v0\n");
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  await s.invoke("write_file", { path: a, text: "by the tool\n" });
  fs.writeFileSync(a, "my own edit\n");
  fs.writeFileSync(a, "recorded\n");
  await s.recordToolCall({ tool: "write_file", args: { path: a, text: "recorded\n" }, result: { previous: "my own edit\n" } });
  // Its write then known to forkpoint: no drift before the move either.
  if (checkpointAfter) await s.checkpoint({ name: "after" });
  return { s, a, c0 };
}

it("a hand edit under a recorded call's write over a tool call's file: the older call's undo is refused", async () => {
  for (const checkpointAfter of [false, true]) {
    const { s, a, c0 } = await handEditUnderRecorded(checkpointAfter);
    for (let i = 0; i < 2; i++) {
      const refused = await rejectionOf(s.rollback(c0.id, { scope: "conversation" }));
      expect(refused).toMatchObject({ code: "WORKSPACE_DRIFT", message: expect.stringContaining("a.txt") });
      expect(readOrNull(a)).toBe("my own edit\n");
    }
    const forced = await s.rollback(c0.id, { scope: "conversation", force: true });
    expect(forced.savedDrift?.files).toEqual(["a.txt"]);
    expect(forced.undone.map((t) => t.tool)).toEqual(["write_file"]);
    expect(readOrNull(a)).toBe("v0\n");
    expect((await s.diffFiles(c0.id, forced.savedDrift!.checkpointId)).patch).toContain("+my own edit");
  }
});

// A "both" rewind saves the recorded call's write first (forced), then stops as above: forced again, it saves the hand edit.
it("a hand edit under a recorded call's write, a forced both rewind: saved before the older call's undo", async () => {
  const { s, a, c0 } = await handEditUnderRecorded();
  expect(await rejectionOf(s.rollback(c0.id, { scope: "both", force: true }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(a)).toBe("my own edit\n");
  const forced = await s.rollback(c0.id, { scope: "both", force: true });
  expect(forced.savedDrift?.files).toEqual(["a.txt"]);
  expect(readOrNull(a)).toBe("v0\n");
  expect((await s.diffFiles(c0.id, forced.savedDrift!.checkpointId)).patch).toContain("+my own edit");
});

it("a hand edit under a recorded call's write that a checkpoint keeps: the older call's undo writes over it", async () => {
  const ws = tempDir("forkpoint-conv-recorded-");
  const { fp } = dbs.open({ tools: [writeFileTool()] as never[] });
  const s = await fp.createSession({ userId: "u" });
  const a = path.join(ws, "a.txt");
  fs.writeFileSync(a, "v0\n");
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  await s.invoke("write_file", { path: a, text: "by the tool\n" });
  fs.writeFileSync(a, "my own edit\n");
  const kept = await s.checkpoint({ name: "kept" });
  fs.writeFileSync(a, "recorded\n");
  await s.recordToolCall({ tool: "write_file", args: { path: a, text: "recorded\n" }, result: { previous: "my own edit\n" } });
  expect((await s.rollback(c0.id, { scope: "conversation" })).undone.map((t) => t.tool)).toEqual(["write_file", "write_file"]);
  expect(readOrNull(a)).toBe("v0\n");
  expect((await s.diffFiles(c0.id, kept.id)).patch).toContain("+my own edit");
});

// The older call written over may be a recorded call too: its record keeps what the files it names held as recorded.
it("a hand edit between two recorded calls over one file: the older recorded call's undo is refused", async () => {
  const { s, c0, b } = await setup();
  fs.writeFileSync(b, "my own edit\n");
  fs.writeFileSync(b, "recorded again\n");
  await s.recordToolCall({ tool: "write_file", args: { path: b, text: "recorded again\n" }, result: { previous: "my own edit\n" } });
  for (let i = 0; i < 2; i++) {
    expect(await rejectionOf(s.rollback(c0.id))).toMatchObject({ code: "WORKSPACE_DRIFT", message: expect.stringContaining("b.txt") });
    expect(readOrNull(b)).toBe("my own edit\n");
  }
  const forced = await s.rollback(c0.id, { force: true });
  expect(forced.savedDrift?.files).toEqual(["b.txt"]);
  expect(readOrNull(b)).toBeNull();
  expect((await s.diffFiles(c0.id, forced.savedDrift!.checkpointId)).patch).toContain("+my own edit");
});

// A replay writing there next is held the same way: a switch to a branch whose call (tool or recorded) wrote that file.
it("a hand edit a recorded call's undo puts back, then a replay writes that file: the switch stops there", async () => {
  for (const kind of ["invoked", "recorded"] as const) {
    const ws = tempDir("forkpoint-conv-recorded-");
    const { fp } = dbs.open({ tools: [writeFileTool()] as never[] });
    const s = await fp.createSession({ userId: "u" });
    const a = path.join(ws, "a.txt");
    fs.writeFileSync(a, "v0\n");
    await s.attachWorkspace(ws);
    await s.append({ role: "user", content: "go" });
    const c0 = await s.checkpoint({ name: "c0" });
    const main = (await s.info()).currentBranchId;
    await s.append({ role: "user", content: "main" });
    await s.rollback(c0.id);
    await s.append({ role: "user", content: "other" });
    if (kind === "invoked") await s.invoke("write_file", { path: a, text: "other\n" });
    else {
      fs.writeFileSync(a, "other\n");
      await s.recordToolCall({ tool: "write_file", args: { path: a, text: "other\n" }, result: { previous: "v0\n" } });
    }
    const other = (await s.info()).currentBranchId;
    await s.switchBranch(main);
    fs.writeFileSync(a, "my own edit\n");
    fs.writeFileSync(a, "recorded\n");
    await s.recordToolCall({ tool: "write_file", args: { path: a, text: "recorded\n" }, result: { previous: "my own edit\n" } });
    for (let i = 0; i < 2; i++) {
      expect(await rejectionOf(s.switchBranch(other))).toMatchObject({
        code: "WORKSPACE_DRIFT",
        message: expect.stringContaining("a.txt"),
      });
      expect(readOrNull(a)).toBe("my own edit\n");
    }
    const forced = await s.switchBranch(other, { force: true });
    expect(forced.savedDrift?.files).toEqual(["a.txt"]);
    expect(readOrNull(a)).toBe("other\n");
    expect((await s.diffFiles(c0.id, forced.savedDrift!.checkpointId)).patch).toContain("+my own edit");
  }
});

// A tool call over a recorded call's write finds it as drift (a hand edit, for all forkpoint saw): its undo puts it
// back. The recorded call's undo, next, takes its own write back, and its replay makes it again: a replay over the file
// after both loses nothing, so the switch runs (it was refused, force or not, as a hand edit no checkpoint could keep).
it("a tool call over a recorded call's write, both undone, then a replay of that file: the switch runs", async () => {
  const ws = tempDir("forkpoint-conv-recorded-");
  const { fp } = dbs.open({ tools: [writeFileTool()] as never[] });
  const s = await fp.createSession({ userId: "u" });
  const a = path.join(ws, "a.txt");
  fs.writeFileSync(a, "v0\n");
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  await s.checkpoint({ name: "c0" });
  const [m] = await s.append({ role: "user", content: "write" });
  await s.invoke("write_file", { path: a, text: "main\n" });
  const main = (await s.info()).currentBranchId;
  await s.edit(m!.id, { content: "other" });
  expect(readOrNull(a)).toBe("v0\n");
  fs.writeFileSync(a, "recorded\n");
  await s.recordToolCall({ tool: "write_file", args: { path: a, text: "recorded\n" }, result: { previous: "v0\n" } });
  await s.invoke("write_file", { path: a, text: "over it\n" });
  const other = (await s.info()).currentBranchId;

  const plan = await s.plan({ branchId: main });
  expect({ drift: plan.drift, blocked: plan.blocked }).toEqual({ drift: [], blocked: undefined });
  const moved = await s.switchBranch(main);
  expect(moved.undone.map((t) => (t.args as { text: string }).text)).toEqual(["over it\n", "recorded\n"]);
  expect(moved.replayed.map((t) => (t.args as { text: string }).text)).toEqual(["main\n"]);
  expect(readOrNull(a)).toBe("main\n");
  // Back again: the recorded call's write is made again, and the tool call over it.
  await s.switchBranch(other);
  expect(readOrNull(a)).toBe("over it\n");
  const forced = await s.switchBranch(main, { force: true });
  expect(forced.savedDrift).toBeUndefined();
  expect(readOrNull(a)).toBe("main\n");
});

// Where the tool call found a hand edit made after the recorded call, that edit is what the undo puts back: refused.
it("a hand edit after a recorded call's write, a tool call over it, then a replay of that file: refused", async () => {
  const ws = tempDir("forkpoint-conv-recorded-");
  const { fp } = dbs.open({ tools: [writeFileTool()] as never[] });
  const s = await fp.createSession({ userId: "u" });
  const a = path.join(ws, "a.txt");
  fs.writeFileSync(a, "v0\n");
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  await s.checkpoint({ name: "c0" });
  const [m] = await s.append({ role: "user", content: "write" });
  await s.invoke("write_file", { path: a, text: "main\n" });
  const main = (await s.info()).currentBranchId;
  await s.edit(m!.id, { content: "other" });
  fs.writeFileSync(a, "recorded\n");
  await s.recordToolCall({ tool: "write_file", args: { path: a, text: "recorded\n" }, result: { previous: "v0\n" } });
  fs.writeFileSync(a, "my own edit\n");
  await s.invoke("write_file", { path: a, text: "over it\n" });
  for (const force of [false, true]) {
    const refused = await rejectionOf(s.switchBranch(main, { force }));
    expect(refused).toMatchObject({ code: "WORKSPACE_DRIFT", message: expect.stringContaining("force cannot save it first") });
    expect(readOrNull(a)).toBe("over it\n");
  }
});

// The recorded call's record says what it left in the file: a hand edit the tool call found there was made after it, so
// the recorded call's undo would write over what the tool call's undo puts back, a save on no disk and in no checkpoint.
it("a recorded call's write, a hand edit, a tool call over it: a rewind to before all three is refused", async () => {
  const ws = tempDir("forkpoint-conv-recorded-");
  const { fp } = dbs.open({ tools: [writeFileTool()] as never[] });
  const s = await fp.createSession({ userId: "u" });
  const a = path.join(ws, "a.txt");
  fs.writeFileSync(a, "v0\n");
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  fs.writeFileSync(a, "recorded\n");
  await s.recordToolCall({ tool: "write_file", args: { path: a, text: "recorded\n" }, result: { previous: "v0\n" } });
  await s.append({ role: "user", content: "recorded" });
  const c1 = await s.checkpoint({ name: "c1" });
  fs.writeFileSync(a, "my own edit\n");
  await s.invoke("write_file", { path: a, text: "over it\n" });
  for (const force of [false, true]) {
    const refused = await rejectionOf(s.rollback(c0.id, { force }));
    expect(refused).toMatchObject({ code: "WORKSPACE_DRIFT", message: expect.stringContaining("force cannot save it first") });
    expect(readOrNull(a)).toBe("over it\n");
  }
  expect((await s.plan({ checkpointId: c0.id })).blocked).toContain("force cannot save it first");

  // As the refusal says: a rewind to before the tool call puts the hand edit back, a checkpoint keeps it.
  await s.rollback(c1.id);
  expect(readOrNull(a)).toBe("my own edit\n");
  await s.checkpoint({ name: "kept" });
  await s.rollback(c0.id);
  expect(readOrNull(a)).toBe("v0\n");
});
