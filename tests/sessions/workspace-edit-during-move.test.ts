// From the MCP review: a hand edit made while a move runs no tool is not forkpoint's doing. Absorbing it as the move's
// own (as the changes of an undo or a replay are) made it "last seen", so the next rewind overwrote it unsaved.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defineTool, type Forkpoint } from "../../src/index.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";
import { writeFileTool } from "../fixtures/file-tools.js";
import { watchableFileSystem } from "../../src/sessions/workspace/watch.js";

let dir: string;
let ws: string;
let fp: Forkpoint;

const file = () => path.join(ws, "a.txt");

beforeEach(() => {
  dir = makeTempDir("forkpoint-ws-edit-during-move-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [writeFileTool()] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

describe("a file edited by hand while a move that runs no tool finishes", () => {
  it("stays drift: the next rewind refuses to overwrite it, and a forced one saves it first", async () => {
    fs.writeFileSync(file(), "one\n");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const one = await s.checkpoint({ name: "one" });
    fs.writeFileSync(file(), "two\n");
    const two = await s.checkpoint({ name: "two" });

    // The listener runs once the files are restored, before the move ends: an editor saving at that moment.
    let edited = false;
    fp.on("rollback", () => {
      if (edited) return;
      edited = true;
      fs.writeFileSync(file(), "typed during the rollback\n");
    });
    await s.rollback(one.id, { scope: "both" });
    expect(edited).toBe(true);
    expect(fs.readFileSync(file(), "utf8")).toBe("typed during the rollback\n");

    expect(await rejectionOf(s.rollback(two.id, { scope: "both" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(fs.readFileSync(file(), "utf8")).toBe("typed during the rollback\n");
    const forced = await s.rollback(two.id, { scope: "both", force: true });
    expect(forced.savedDrift?.files).toEqual(["a.txt"]);
    expect(fs.readFileSync(file(), "utf8")).toBe("two\n");
    expect((await s.diffFiles(forced.savedDrift!.checkpointId, two.id)).patch).toContain("-typed during the rollback");
  });

  it("after a move that undid a tool call and replays none: stays drift too", async () => {
    fs.writeFileSync(file(), "one\n");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const one = await s.checkpoint({ name: "one" });
    await s.invoke("write_file", { path: path.join(ws, "b.txt"), text: "by the tool\n" });
    fs.writeFileSync(file(), "two\n");
    const two = await s.checkpoint({ name: "two" });

    let edited = false;
    fp.on("rollback", () => {
      if (edited) return;
      edited = true;
      fs.writeFileSync(file(), "typed during the rollback\n");
    });
    const back = await s.rollback(one.id, { scope: "both" });
    expect(back.undone).toHaveLength(1);
    expect(fs.existsSync(path.join(ws, "b.txt"))).toBe(false);
    expect(fs.readFileSync(file(), "utf8")).toBe("typed during the rollback\n");

    expect(await rejectionOf(s.rollback(two.id, { scope: "both" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(fs.readFileSync(file(), "utf8")).toBe("typed during the rollback\n");
  });
});

// Reviews 10 and 13: a file saved by hand while an undo ran was taken as the undo's, and the restore wrote over it.
describe("a file changed while a move's undos run, outside the files the undone calls changed", () => {
  /** A tool writing `target`, its undo writing it back, then running `onUndo` (an editor saving, a log written). */
  const put = (name: string, target: () => string, onUndo: () => void = () => {}) =>
    defineTool<{ text: string }, { previous: string | null }>({
      name,
      run: (args) => {
        const previous = fs.existsSync(target()) ? fs.readFileSync(target(), "utf8") : null;
        fs.writeFileSync(target(), args.text);
        return { previous };
      },
      undo: ({ result }) => {
        if (result.previous === null) fs.rmSync(target(), { force: true });
        else fs.writeFileSync(target(), result.previous);
        onUndo();
      },
    });

  it("is left as it is (files.kept), counts as changed, and a checkpoint keeps it", async () => {
    const h = () => path.join(ws, "h.txt");
    let save = false;
    const mine = openForkpoint({
      path: path.join(dir, "saved.db"),
      tools: [put("put_h", h, () => save && fs.writeFileSync(file(), "saved by hand\n"))],
    });
    try {
      fs.writeFileSync(file(), "one\n");
      const s = await mine.createSession({ userId: "u" });
      await s.attachWorkspace(ws);
      const start = await s.checkpoint({ name: "start" });
      fs.writeFileSync(file(), "two\n");
      await s.invoke("put_h", { text: "h1\n" });
      const end = await s.checkpoint({ name: "end" });
      save = true;
      const back = await s.rollback(start.id, { scope: "both" });
      expect(back.undone.map((c) => c.tool)).toEqual(["put_h"]);
      expect(back.files).toEqual({ written: [], deleted: [], kept: ["a.txt"] });
      expect(fs.readFileSync(file(), "utf8")).toBe("saved by hand\n");
      expect(fs.existsSync(h())).toBe(false);
      save = false;

      // Forkpoint never saw it: the next rewind refuses to overwrite it, and a checkpoint keeps it.
      expect(await rejectionOf(s.rollback(end.id, { scope: "both" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
      expect(fs.readFileSync(file(), "utf8")).toBe("saved by hand\n");
      const kept = await s.checkpoint({ name: "kept" });
      await s.rollback(end.id, { scope: "both" });
      expect(fs.readFileSync(file(), "utf8")).toBe("two\n");
      expect(fs.readFileSync(h(), "utf8")).toBe("h1\n");
      await s.rollback(kept.id, { scope: "both" });
      expect(fs.readFileSync(file(), "utf8")).toBe("saved by hand\n");
    } finally {
      await mine.close();
    }
  });

  it("a file an undo writes past its call's files (a log) stays, and counts as changed", async () => {
    const h = () => path.join(ws, "h.txt");
    const log = () => path.join(ws, "undo.log");
    const mine = openForkpoint({
      path: path.join(dir, "log.db"),
      tools: [put("put_h", h, () => fs.appendFileSync(log(), "undid put_h\n"))],
    });
    try {
      const s = await mine.createSession({ userId: "u" });
      await s.attachWorkspace(ws);
      const start = await s.checkpoint({ name: "start" });
      await s.invoke("put_h", { text: "h1\n" });
      const back = await s.rollback(start.id, { scope: "both" });
      expect(back.files?.kept).toEqual(["undo.log"]);
      expect(fs.readFileSync(log(), "utf8")).toBe("undid put_h\n");
      const again = await rejectionOf(s.rollback(start.id, { scope: "both" }));
      expect(again).toMatchObject({ code: "WORKSPACE_DRIFT", message: expect.stringContaining("undo.log") });
      expect(fs.readFileSync(log(), "utf8")).toBe("undid put_h\n");
    } finally {
      await mine.close();
    }
  });

  it("in a move that restores no files, stays drift too: a later rewind refuses to overwrite it", async () => {
    const h = () => path.join(ws, "h.txt");
    let save = false;
    const tools = [put("put_h", h, () => save && fs.writeFileSync(file(), "saved by hand\n"))];
    const mine = openForkpoint({ path: path.join(dir, "conversation.db"), tools });
    try {
      fs.writeFileSync(file(), "one\n");
      const s = await mine.createSession({ userId: "u" });
      await s.attachWorkspace(ws);
      const start = await s.checkpoint({ name: "start" });
      await s.invoke("put_h", { text: "h1\n" });
      const end = await s.checkpoint({ name: "end" });
      save = true;
      await s.rollback(start.id);
      save = false;
      expect(fs.existsSync(h())).toBe(false);
      expect(fs.readFileSync(file(), "utf8")).toBe("saved by hand\n");
      expect(await rejectionOf(s.rollback(end.id, { scope: "both" }))).toMatchObject({
        code: "WORKSPACE_DRIFT",
        message: expect.stringContaining("a.txt"),
      });
      expect(fs.readFileSync(file(), "utf8")).toBe("saved by hand\n");
    } finally {
      await mine.close();
    }
  });

  // Where a watcher tells each step's changes apart (as workspace-move-crash.test.ts).
  it.skipIf(!watchableFileSystem(os.tmpdir()))(
    "an earlier call's undo that writes that file next has its write taken back: the save stays, listed in files.kept",
    async () => {
      const h = () => path.join(ws, "h.txt");
      let save = false;
      const tools = [writeFileTool(), put("put_h", h, () => save && fs.writeFileSync(file(), "saved by hand\n"))];
      for (const scope of ["both", "conversation"] as const) {
        const mine = openForkpoint({ path: path.join(dir, `later-undo-${scope}.db`), tools });
        try {
          fs.writeFileSync(file(), "one\n");
          const s = await mine.createSession({ userId: "u" });
          await s.attachWorkspace(ws);
          const start = await s.checkpoint({ name: "start" });
          await s.invoke("write_file", { path: file(), text: "two\n" });
          await s.invoke("put_h", { text: "h1\n" });
          const end = await s.checkpoint({ name: "end" });
          // Undone last first: put_h's undo runs as the user saves a.txt, then write_file's undo puts "one" back there.
          save = true;
          const back = await s.rollback(start.id, { scope });
          save = false;
          expect(back.undone.map((c) => c.tool)).toEqual(["put_h", "write_file"]);
          if (scope === "both") expect(back.files?.kept).toEqual(["a.txt"]);
          expect(fs.readFileSync(file(), "utf8")).toBe("saved by hand\n");
          expect(fs.existsSync(h())).toBe(false);
          // Still unsaved: the next rewind refuses to overwrite it.
          expect(await rejectionOf(s.rollback(end.id, { scope: "both" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
          expect(fs.readFileSync(file(), "utf8")).toBe("saved by hand\n");
        } finally {
          await mine.close();
          fs.rmSync(h(), { force: true });
        }
      }
    },
  );

  it("saved while a switch replays a call: stays drift, and a later rewind refuses to overwrite it", async () => {
    const h = () => path.join(ws, "h.txt");
    const putOnReplay = defineTool<{ text: string }, { previous: string | null }>({
      name: "put_h",
      run: (args, ctx) => {
        const previous = fs.existsSync(h()) ? fs.readFileSync(h(), "utf8") : null;
        fs.writeFileSync(h(), args.text);
        if (ctx.replay) fs.writeFileSync(file(), "saved by hand\n");
        return { previous };
      },
      undo: ({ result }) => (result.previous === null ? fs.rmSync(h(), { force: true }) : fs.writeFileSync(h(), result.previous)),
    });
    for (const scope of ["conversation", "both"] as const) {
      const mine = openForkpoint({ path: path.join(dir, `replay-${scope}.db`), tools: [putOnReplay] });
      try {
        fs.writeFileSync(file(), "one\n");
        const s = await mine.createSession({ userId: "u" });
        await s.attachWorkspace(ws);
        const start = await s.checkpoint({ name: "start" });
        await s.invoke("put_h", { text: "h1\n" });
        const back = await s.rollback(start.id, { scope: "both" });
        const again = await s.switchBranch(back.branch.parentId!, { scope });
        expect(again.replayed.map((c) => c.tool)).toEqual(["put_h"]);
        expect(fs.readFileSync(h(), "utf8")).toBe("h1\n");
        expect(fs.readFileSync(file(), "utf8")).toBe("saved by hand\n");
        expect(await rejectionOf(s.rollback(start.id, { scope: "both" }))).toMatchObject({
          code: "WORKSPACE_DRIFT",
          message: expect.stringContaining("a.txt"),
        });
        expect(fs.readFileSync(file(), "utf8")).toBe("saved by hand\n");
      } finally {
        await mine.close();
        fs.rmSync(h(), { force: true });
      }
    }
  });

  // Where a watcher tells each step's changes apart: a later replay of that switch writing the file stops the move.
  it.skipIf(!watchableFileSystem(os.tmpdir()))(
    "saved while a replay runs, in a file a later replay writes: the switch stops there (WORKSPACE_DRIFT), the save on disk",
    async () => {
      const h = () => path.join(ws, "h.txt");
      const putOnReplay = defineTool<{ text: string }, { previous: string | null }>({
        name: "put_h",
        run: (args, ctx) => {
          fs.writeFileSync(h(), args.text);
          if (ctx.replay) fs.writeFileSync(file(), "saved by hand\n");
          return { previous: null };
        },
        undo: () => fs.rmSync(h(), { force: true }),
      });
      for (const scope of ["both", "conversation"] as const) {
        const mine = openForkpoint({ path: path.join(dir, `later-replay-${scope}.db`), tools: [putOnReplay, writeFileTool()] });
        try {
          fs.writeFileSync(file(), "one\n");
          const s = await mine.createSession({ userId: "u" });
          await s.attachWorkspace(ws);
          const start = await s.checkpoint({ name: "start" });
          await s.invoke("put_h", { text: "h1\n" });
          await s.invoke("write_file", { path: file(), text: "two\n" });
          const back = await s.rollback(start.id, { scope: "both" });
          // put_h's replay runs as the user saves a.txt; write_file's replay, next, would write over that save unsaved.
          const stopped = await rejectionOf(s.switchBranch(back.branch.parentId!, { scope }));
          expect(stopped).toMatchObject({ code: "WORKSPACE_DRIFT", message: expect.stringContaining("a.txt") });
          expect(fs.readFileSync(file(), "utf8")).toBe("saved by hand\n");
          // Kept in a checkpoint, the switch called again goes on: write_file's replay writes a.txt.
          const kept = await s.checkpoint({ name: "kept" });
          const again = await s.switchBranch(back.branch.parentId!, { scope });
          expect(again.replayed.map((c) => c.tool)).toContain("write_file");
          expect(fs.readFileSync(file(), "utf8")).toBe("two\n");
          expect(fs.readFileSync(h(), "utf8")).toBe("h1\n");
          await s.rollback(kept.id, { scope: "both" });
          expect(fs.readFileSync(file(), "utf8")).toBe("saved by hand\n");
        } finally {
          await mine.close();
          fs.rmSync(h(), { force: true });
        }
      }
    },
  );

  // The same with that earlier call recorded with `recordToolCall` (ran elsewhere: no record of the files its run
  // changed): its undo's write over the save is taken back all the same.
  it.skipIf(!watchableFileSystem(os.tmpdir()))(
    "an earlier recorded call's undo that writes that file next has its write taken back: the save stays",
    async () => {
      const h = () => path.join(ws, "h.txt");
      let save = false;
      const tools = [writeFileTool(), put("put_h", h, () => save && fs.writeFileSync(file(), "saved by hand\n"))];
      for (const scope of ["both", "conversation"] as const) {
        const mine = openForkpoint({ path: path.join(dir, `later-recorded-undo-${scope}.db`), tools });
        try {
          fs.writeFileSync(file(), "one\n");
          const s = await mine.createSession({ userId: "u" });
          await s.attachWorkspace(ws);
          const start = await s.checkpoint({ name: "start" });
          fs.writeFileSync(file(), "two\n");
          await s.recordToolCall({ tool: "write_file", args: { path: file(), text: "two\n" }, result: { previous: "one\n" } });
          await s.invoke("put_h", { text: "h1\n" });
          const end = await s.checkpoint({ name: "end" });
          // Undone last first: put_h's undo runs as the user saves a.txt, then write_file's undo puts "one" back there.
          save = true;
          const back = await s.rollback(start.id, { scope });
          save = false;
          expect(back.undone.map((c) => c.tool)).toEqual(["put_h", "write_file"]);
          if (scope === "both") expect(back.files?.kept).toEqual(["a.txt"]);
          expect(fs.readFileSync(file(), "utf8")).toBe("saved by hand\n");
          // Still unsaved: the next rewind refuses to overwrite it.
          expect(await rejectionOf(s.rollback(end.id, { scope: "both" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
          expect(fs.readFileSync(file(), "utf8")).toBe("saved by hand\n");
        } finally {
          await mine.close();
          fs.rmSync(h(), { force: true });
        }
      }
    },
  );
});
