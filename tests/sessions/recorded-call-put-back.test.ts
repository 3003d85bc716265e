// A recorded call's write (drift), then a tool call over the same file: a "both" edit undoes the tool call, putting the
// recorded write back, then undoes the recorded call over it. That undo's write is the move's own, not drift the
// move found while it ran: the move was refused midway (WORKSPACE_DRIFT), forced or not, with nothing edited by hand.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineTool, type Forkpoint } from "../../src/index.js";
import { readOrNull, writeFileTool } from "../fixtures/file-tools.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

// A shell run elsewhere, recorded only: its undo puts back what the files under its folder held.
const shellTool = defineTool<{ cwd: string; cmd: string }, { before: Record<string, string | null> }>({
  name: "shell",
  run: () => ({ before: {} }),
  undo: ({ args, result }) => {
    for (const [rel, text] of Object.entries(result.before))
      if (text === null) fs.rmSync(path.join(args.cwd, rel), { force: true });
      else fs.writeFileSync(path.join(args.cwd, rel), text);
  },
});

let dir: string;
let ws: string;
let fp: Forkpoint;

beforeEach(() => {
  dir = makeTempDir("forkpoint-recorded-put-back-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [writeFileTool(), shellTool] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

it("a forced edit undoes a tool call over a recorded call's write and replays both", async () => {
  const file = path.join(ws, "c.txt");
  fs.writeFileSync(file, "v0\n");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.checkpoint({ name: "c0" });
  fs.writeFileSync(file, "rec\n"); // a call that ran elsewhere, recorded: drift until a checkpoint
  await s.recordToolCall({ tool: "write_file", args: { path: file, text: "rec\n" }, result: { previous: "v0\n" } });
  await s.invoke("write_file", { path: file, text: "w1\n" });
  const [m] = await s.append({ role: "user", content: "hi" });

  expect(await rejectionOf(s.edit(m!.id, { content: "edited" }, { scope: "both" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  const forced = await s.edit(m!.id, { content: "edited" }, { scope: "both", force: true });
  expect(forced.savedDrift?.files).toEqual(["c.txt"]);
  expect(forced.replayed.map((t) => (t.args as { text: string }).text)).toEqual(["rec\n", "w1\n"]);
  expect(forced.files?.kept).toBeUndefined();
  expect(readOrNull(file)).toBe("w1\n");
  expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true, true]);

  // Kept in a checkpoint since, the same edit again runs without force.
  await s.checkpoint({ name: "kept" });
  const again = await s.edit(m!.id, { content: "again" }, { scope: "both" });
  expect(again.files?.kept).toBeUndefined();
  expect(readOrNull(file)).toBe("w1\n");
});

// What a recorded call's undo puts back stays drift only where a hand edit may be lost: a deletion (or content a
// checkpoint keeps) is the move's own, and a "both" rewind restores the target's files over it, not keeps it.
it("a \"both\" rewind over a recorded call's undo that deletes the file restores the target's content", async () => {
  const file = path.join(ws, "b.txt");
  fs.writeFileSync(path.join(ws, "a.txt"), "v0\n");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  fs.writeFileSync(file, "first\n");
  await s.recordToolCall({ tool: "write_file", args: { path: file, text: "first\n" }, result: { previous: null } });
  await s.append({ role: "user", content: "next" });
  const c1 = await s.checkpoint({ name: "c1" });
  await s.rollback(c0.id);
  expect(readOrNull(file)).toBeNull();
  fs.writeFileSync(file, "second\n");
  await s.recordToolCall({ tool: "write_file", args: { path: file, text: "second\n" }, result: { previous: null } });
  await s.checkpoint({ name: "second" });

  const moved = await s.rollback(c1.id, { scope: "both" });
  expect(moved.files?.kept).toBeUndefined();
  expect(readOrNull(file)).toBe("first\n");
});

// Put back in content no checkpoint keeps, the file stays drift until an older tool call's undo writes there: the
// restore then writes the target's content over that undo's write.
it("a \"both\" rewind over a recorded call's undo, then an older tool call's undo of that file: the target's content", async () => {
  const file = path.join(ws, "c.txt");
  fs.writeFileSync(path.join(ws, "a.txt"), "v0\n");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  await s.invoke("write_file", { path: file, text: "target\n" });
  await s.append({ role: "user", content: "next" });
  const c1 = await s.checkpoint({ name: "c1" });
  await s.rollback(c0.id, { scope: "both" });
  await s.invoke("write_file", { path: file, text: "by the tool\n" });
  fs.writeFileSync(file, "recorded\n");
  await s.recordToolCall({ tool: "write_file", args: { path: file, text: "recorded\n" }, result: { previous: "by the tool\n" } });
  await s.checkpoint({ name: "recorded" });

  const moved = await s.rollback(c1.id, { scope: "both" });
  expect(moved.files?.kept).toBeUndefined();
  expect(readOrNull(file)).toBe("target\n");
});

// The last recorded undo to write a file decides: an older recorded call's undo putting back content a checkpoint keeps
// makes the file the move's own again, over what a newer one's undo left as drift.
it("a \"both\" switch over two recorded calls' undos of one file: the target's content", async () => {
  const file = path.join(ws, "a.txt");
  fs.writeFileSync(file, "v0\n");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  const main = (await s.info()).currentBranchId;
  await s.invoke("write_file", { path: file, text: "target\n" });
  await s.append({ role: "user", content: "next" });
  await s.checkpoint({ name: "c1" });
  await s.rollback(c0.id, { scope: "both" });
  for (const [text, previous] of [
    ["first\n", "v0\n"],
    ["second\n", "first\n"],
  ]) {
    fs.writeFileSync(file, text!);
    await s.recordToolCall({ tool: "write_file", args: { path: file, text: text! }, result: { previous: previous! } });
  }
  await s.checkpoint({ name: "recorded" });

  const moved = await s.switchBranch(main, { scope: "both" });
  expect(moved.files?.kept).toBeUndefined();
  expect(readOrNull(file)).toBe("target\n");
});

// The recorded call's record says what it left in the file: a hand edit the tool call found there was made after it.
// A forced "both" rewind's undo of the tool call puts that edit back; the recorded call's undo then writes over it,
// which is taken back: the hand edit stays on disk (files.kept), as it does with no recorded call under it.
it('a recorded call\'s write, a hand edit, a tool call over it: a forced "both" rewind keeps the hand edit', async () => {
  const file = path.join(ws, "c.txt");
  fs.writeFileSync(file, "v0\n");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  fs.writeFileSync(file, "rec\n");
  await s.recordToolCall({ tool: "write_file", args: { path: file, text: "rec\n" }, result: { previous: "v0\n" } });
  fs.writeFileSync(file, "my own edit\n");
  await s.invoke("write_file", { path: file, text: "w1\n" });
  await s.append({ role: "user", content: "next" });

  expect(await rejectionOf(s.rollback(c0.id, { scope: "both" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(file)).toBe("w1\n");
  const back = await s.rollback(c0.id, { scope: "both", force: true });
  expect(back.undone.map((c) => (c.args as { text: string }).text)).toEqual(["w1\n", "rec\n"]);
  expect(back.savedDrift?.files).toEqual(["c.txt"]);
  expect(back.files?.kept).toEqual(["c.txt"]);
  expect(readOrNull(file)).toBe("my own edit\n");
  // Still unsaved: the next rewind refuses to overwrite it.
  expect(await rejectionOf(s.rollback(c0.id, { scope: "both" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(file)).toBe("my own edit\n");
});

// A hand edit put back that is just what the recorded call left there is that call's effect: its undo writes over it.
it("a recorded call's write, a tool call over it: a forced \"both\" rewind restores the target's content", async () => {
  const file = path.join(ws, "c.txt");
  fs.writeFileSync(file, "v0\n");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  fs.writeFileSync(file, "rec\n");
  await s.recordToolCall({ tool: "write_file", args: { path: file, text: "rec\n" }, result: { previous: "v0\n" } });
  await s.invoke("write_file", { path: file, text: "w1\n" });
  await s.append({ role: "user", content: "next" });

  const back = await s.rollback(c0.id, { scope: "both", force: true });
  expect(back.files?.kept).toBeUndefined();
  expect(readOrNull(file)).toBe("v0\n");
});

for (const scope of ["conversation", "both"] as const)
  it(`a recorded call over a save made after a tool call over a hand edit: the tool call's undo stops (${scope})`, async () => {
    const file = path.join(ws, "c.txt");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const c0 = await s.checkpoint({ name: "c0" });
    fs.writeFileSync(file, "first save\n");
    await s.invoke("write_file", { path: file, text: "w\n" }); // finds "first save": its undo puts that back
    fs.writeFileSync(file, "second save\n");
    fs.writeFileSync(file, "rec\n"); // a call that ran elsewhere, over the second save
    await s.recordToolCall({ tool: "write_file", args: { path: file, text: "rec\n" }, result: { previous: "second save\n" } });
    // The recorded call's undo puts "second save" back; the tool call's undo would write "first save" over it.
    const refused = await rejectionOf(s.rollback(c0.id, { scope, force: scope === "both" }));
    expect(refused).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(readOrNull(file)).toBe("second save\n");
    // Called again forced, the save is kept in a checkpoint first.
    const moved = await s.rollback(c0.id, { scope, force: true });
    expect(moved.savedDrift?.files).toEqual(["c.txt"]);
    const saved = await s.diffFiles(moved.savedDrift!.checkpointId, "disk");
    expect(saved.patch).toContain("-second save");
  });

it("a recorded call's undo puts a hand edit back even when its write's mode changed by hand since", async () => {
  const file = path.join(ws, "c.txt");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const c0 = await s.checkpoint({ name: "c0" });
  await s.invoke("write_file", { path: file, text: "w0\n" });
  fs.writeFileSync(file, "by hand\n");
  fs.writeFileSync(file, "rec\n"); // a call that ran elsewhere, over the hand edit
  await s.recordToolCall({ tool: "write_file", args: { path: file, text: "rec\n" }, result: { previous: "by hand\n" } });
  await s.invoke("write_file", { path: file, text: "w1\n" });
  fs.chmodSync(file, 0o755); // the mode alone changed by hand
  await s.checkpoint({ name: "c1" });
  // Stops where the recorded call's undo put "by hand" back, before the first write's undo deletes it.
  let stopped: unknown;
  for (let i = 0; i < 3 && !(stopped && readOrNull(file) === "by hand\n"); i++)
    stopped = await rejectionOf(s.rollback(c0.id, { scope: "both", force: i > 0 }));
  expect(stopped).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(file)).toBe("by hand\n");
  const moved = await s.rollback(c0.id, { scope: "both", force: true });
  expect((await s.diffFiles(moved.savedDrift!.checkpointId, "disk")).patch).toContain("-by hand");
});

// A recorded shell call names only its folder (cwd): its undo puts back the hand edit it ran over there, as in a file
// named as such. A forced "both" rewind keeps it on disk (files.kept), not the target's content over it.
it('a hand edit a recorded call named by its folder ran over: a forced "both" rewind keeps it', async () => {
  const file = path.join(ws, "c.txt");
  fs.writeFileSync(file, "v0\n");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  fs.writeFileSync(file, "my own edit\n");
  fs.writeFileSync(file, "shell wrote\n"); // a shell run elsewhere in the workspace
  await s.recordToolCall({ tool: "shell", args: { cwd: ws, cmd: "gen" }, result: { before: { "c.txt": "my own edit\n" } } });
  await s.append({ role: "user", content: "next" });

  expect(await rejectionOf(s.rollback(c0.id, { scope: "both" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  const back = await s.rollback(c0.id, { scope: "both", force: true });
  expect(back.savedDrift?.files).toEqual(["c.txt"]);
  expect(back.files?.kept).toEqual(["c.txt"]);
  expect(readOrNull(file)).toBe("my own edit\n");
});

// The switch's undo of the tool call puts the hand edit back; the replay of the recorded call on the branch switched
// to would write over it, unsaved: refused even when forced, as for a tool call's replay, the hand edit still in place.
it("a hand edit a tool call ran over, then a switch replaying a recorded write of that file: refused", async () => {
  const file = path.join(ws, "b.txt");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  fs.writeFileSync(file, "rec\n");
  await s.recordToolCall({ tool: "write_file", args: { path: file, text: "rec\n" }, result: { previous: null } });
  await s.append({ role: "user", content: "on b" });
  const onB = (await s.branches()).find((b) => b.current)!;
  await s.rollback(c0.id, { scope: "conversation" });
  fs.writeFileSync(file, "my own edit\n");
  await s.invoke("write_file", { path: file, text: "w\n" });

  expect((await s.plan({ branchId: onB.id, scope: "conversation" })).blocked).toBeDefined();
  for (const force of [false, true]) {
    expect(await rejectionOf(s.switchBranch(onB.id, { scope: "conversation", force }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(readOrNull(file)).toBe("w\n");
  }
});

// Two shell calls recorded in one folder (cwd), no hand edit: the newer one's undo writes no "hand edit" into the
// folder itself, so the older one's undo runs and the rewind gives the target's files, any scope.
for (const scope of ["conversation", "both"] as const)
  it(`two recorded calls naming one folder: a rewind to before both undoes both (${scope})`, async () => {
    const sub = path.join(ws, "sub");
    fs.mkdirSync(sub);
    fs.writeFileSync(path.join(sub, "b.txt"), "v0\n");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    await s.append({ role: "user", content: "go" });
    const c0 = await s.checkpoint({ name: "c0" });
    fs.writeFileSync(path.join(sub, "b.txt"), "one\n");
    await s.recordToolCall({ tool: "shell", args: { cwd: sub, cmd: "one" }, result: { before: { "b.txt": "v0\n" } } });
    fs.writeFileSync(path.join(sub, "c.txt"), "two\n");
    await s.recordToolCall({ tool: "shell", args: { cwd: sub, cmd: "two" }, result: { before: { "c.txt": null } } });
    await s.append({ role: "user", content: "next" });
    await s.checkpoint({ name: "after" });

    const back = await s.rollback(c0.id, { scope });
    expect(back.undone).toHaveLength(2);
    expect(readOrNull(path.join(sub, "b.txt"))).toBe("v0\n");
    expect(readOrNull(path.join(sub, "c.txt"))).toBeNull();
  });
