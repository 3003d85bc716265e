// A move with scope "both" leaves the files of the calls it leaves applied as they are, as it does for a call whose undo
// failed under "continue": an irreversible call it passes (its effect is still out there, and no move runs it again),
// and a call left for want of its tool (`unregistered: "leave"`: the next move by an opener with the tool undoes it,
// and its undo must find its effect). Their paths are reported in `files.kept`.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { appendLineTool, noteLineTool, readOrNull, tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** A workspace with `keep.txt`, and the session attached to it. */
async function attached(tools: Parameters<typeof dbs.open>[0]) {
  const ws = tempDir("forkpoint-left-applied-");
  fs.writeFileSync(path.join(ws, "keep.txt"), "k\n");
  const { fp, path: file } = dbs.open(tools);
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  return { ws, s, file };
}

it("a rewind keeps the file an irreversible call wrote, and so does the switch back", async () => {
  const { ws, s } = await attached({ tools: [noteLineTool] });
  const notes = path.join(ws, "notes.txt");
  const c0 = await s.checkpoint({ name: "c0" });
  await s.invoke("note_line", { path: notes, line: "sent" });
  const main = (await s.info()).currentBranchId;
  const back = await s.rollback(c0.id, { scope: "both" });
  expect(back.skipped.map((t) => t.tool)).toEqual(["note_line"]);
  expect(back.files).toEqual({ written: [], deleted: [], kept: ["notes.txt"] });
  expect(readOrNull(notes)).toBe("sent\n");
  expect((await s.toolTrack({ branchId: main })).map((t) => t.applied)).toEqual([true]);
  const forth = await s.switchBranch(main, { scope: "both" });
  expect(forth.replayed).toEqual([]);
  expect(forth.files?.kept).toEqual(["notes.txt"]);
  expect(readOrNull(notes)).toBe("sent\n");
  // Nothing else counts as drift: a checkpoint finds the files as forkpoint left them.
  expect((await s.diffFiles(c0.id, "disk")).added).toEqual(["notes.txt"]);
});

it("a second rewind to the same point keeps it too, though it no longer passes the call", async () => {
  const { ws, s } = await attached({ tools: [noteLineTool] });
  const notes = path.join(ws, "notes.txt");
  const c0 = await s.checkpoint({ name: "c0" });
  await s.append({ role: "user", content: "send it" });
  await s.invoke("note_line", { path: notes, line: "sent" });
  const first = await s.rollback(c0.id, { scope: "both" });
  const again = await s.rollback(c0.id, { scope: "both" });
  expect(again.skipped).toEqual([]);
  expect(again.files?.kept).toEqual(["notes.txt"]);
  expect(readOrNull(notes)).toBe("sent\n");
  await s.append({ role: "user", content: "elsewhere" });
  await s.checkpoint({ name: "c1" });
  await s.rollback(c0.id, { scope: "both" });
  await s.switchBranch(first.branch.id, { scope: "both" });
  expect(readOrNull(notes)).toBe("sent\n");
});

it("an irreversible call recorded without paths is taken to be in the snapshot: its file is restored", async () => {
  const { ws, s } = await attached({});
  const notes = path.join(ws, "notes.txt");
  const c0 = await s.checkpoint({ name: "c0" });
  fs.writeFileSync(notes, "sent\n");
  await s.recordToolCall({ tool: "note_line", args: { path: notes, line: "sent" }, result: null });
  await s.checkpoint({ name: "c1" });
  const back = await s.rollback(c0.id, { scope: "both" });
  expect(back.files).toEqual({ written: [], deleted: ["notes.txt"] });
  expect(readOrNull(notes)).toBe(null);
});

it("an edit after an irreversible call its snapshot does not hold keeps that call's file too", async () => {
  const { ws, s } = await attached({ tools: [noteLineTool] });
  const notes = path.join(ws, "notes.txt");
  await s.checkpoint({ name: "c0" });
  await s.invoke("note_line", { path: notes, line: "sent" });
  const [m] = await s.append({ role: "user", content: "then" });
  const edited = await s.edit(m!.id, { content: "else" }, { scope: "both" });
  expect(edited.skipped).toEqual([]);
  expect(edited.files?.kept).toEqual(["notes.txt"]);
  expect(readOrNull(notes)).toBe("sent\n");
});

it("only the irreversible call's paths are kept: a reversible call's are undone and restored", async () => {
  const { ws, s } = await attached({ tools: [noteLineTool, appendLineTool()] });
  const [log, notes] = [path.join(ws, "log.txt"), path.join(ws, "notes.txt")];
  const c0 = await s.checkpoint({ name: "c0" });
  await s.invoke("append_line", { path: log, line: "a" });
  await s.invoke("note_line", { path: notes, line: "sent" });
  const back = await s.rollback(c0.id, { scope: "both" });
  expect(back.undone.map((t) => t.tool)).toEqual(["append_line"]);
  expect(back.skipped.map((t) => t.tool)).toEqual(["note_line"]);
  expect(back.files).toEqual({ written: [], deleted: ["log.txt"], kept: ["notes.txt"] });
  expect(readOrNull(log)).toBe(null);
  expect(readOrNull(notes)).toBe("sent\n");
});

it("an opener without the tool leaves the call's file as it is, so the next move with the tool undoes it", async () => {
  let undos = 0;
  /** Appends a line; its undo removes that last line, and refuses when the file does not end with it. */
  const strictAppend = defineTool<{ path: string; line: string }, null>({
    name: "strict_append",
    run: (args) => {
      fs.appendFileSync(args.path, `${args.line}\n`);
      return null;
    },
    undo: ({ args }) => {
      undos++;
      const text = fs.readFileSync(args.path, "utf8");
      if (!text.endsWith(`${args.line}\n`)) throw new Error(`${args.line} is not the last line of ${JSON.stringify(text)}`);
      fs.writeFileSync(args.path, text.slice(0, -args.line.length - 1));
    },
  });
  const { ws, s, file } = await attached({ tools: [strictAppend] });
  const log = path.join(ws, "log.txt");
  fs.writeFileSync(log, "base\n");
  const c0 = await s.checkpoint({ name: "c0" });
  await s.invoke("strict_append", { path: log, line: "A" });
  const bare = dbs.open({ path: file }).fp;
  const left = await (await bare.getSession(s.id, { userId: "u" })).rollback(c0.id, { scope: "both", unregistered: "leave" });
  await bare.close();
  expect(left.unregistered.map((t) => t.tool)).toEqual(["strict_append"]);
  expect(left.files?.kept).toEqual(["log.txt"]);
  expect(readOrNull(log)).toBe("base\nA\n");
  const moved = await s.rollback(c0.id, { scope: "both" });
  expect(moved.undone.map((t) => t.tool)).toEqual(["strict_append"]);
  expect(undos).toBe(1);
  expect(readOrNull(log)).toBe("base\n");
});

it("an irreversible call of another branch keeps its file, and a call sharing it is undone as the file has it", async () => {
  const { ws, s } = await attached({ tools: [noteLineTool, appendLineTool()] });
  const log = path.join(ws, "log");
  const start = await s.checkpoint({ name: "start" });
  await s.append({ role: "user", content: "note L0" });
  await s.invoke("append_line", { path: log, line: "L0" });
  const noted = await s.checkpoint({ name: "noted" });
  const first = (await s.info()).currentBranchId;
  await s.rollback(start.id, { scope: "conversation" });
  await s.invoke("note_line", { path: log, line: "N" });
  await s.switchBranch(first, { scope: "conversation" });
  expect(readOrNull(log)).toBe("N\nL0\n");
  // The note is applied off the target's lineage and "noted" does not hold it: its line stays.
  const back = await s.rollback(noted.id, { scope: "both" });
  expect(back.files?.kept).toEqual(["log"]);
  expect(readOrNull(log)).toBe("N\nL0\n");
  // The append stays applied as the file holds it (its replay over the note): undone to that, the note stays.
  await s.rollback(start.id, { scope: "conversation" });
  expect(readOrNull(log)).toBe("N\n");
});
