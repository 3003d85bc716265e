// A stopped "conversation" rewind called again keeps the hand edits the stopped one's undos put back, as a resumed
// move does: also with a prune between the stop and the second call, and after two stops in a row.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool, type Forkpoint } from "../../src/index.js";
import { engineOf } from "../../src/sessions/forkpoint.js";
import { workspaceStateFor } from "../../src/sessions/workspace/state.js";
import { readOrNull, tempDir, writeFileTool, type WriteArgs, type WriteResult } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** write_file whose undo fails while `broken` is set. */
let broken = false;
const flakyWrite = defineTool<WriteArgs, WriteResult>({
  name: "flaky_write",
  effects: "workspace",
  run: (args) => {
    const previous = readOrNull(args.path);
    fs.writeFileSync(args.path, args.text);
    return { previous };
  },
  undo: ({ args, result }) => {
    if (broken) throw new Error("broken");
    if (result.previous === null) fs.rmSync(args.path, { force: true });
    else fs.writeFileSync(args.path, result.previous);
  },
});

/** A session on a fresh workspace, checkpointed empty; `walk`: followed without a watcher (every scan walks). */
async function started(walk: boolean) {
  const ws = tempDir("forkpoint-stopped-put-back-");
  const fp: Forkpoint = dbs.open({ tools: [flakyWrite, writeFileTool()] as never[] }).fp;
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  if (walk) {
    const state = workspaceStateFor(engineOf(fp).ctx, s.id)!;
    state.watch?.close();
    state.watch = null;
    state.watchable = false;
  }
  const start = await s.checkpoint({ name: "start" });
  const file = (rel: string) => path.join(ws, rel);
  // d written, e written, d edited by hand, then d written again (its run finds the hand edit).
  await s.invoke("flaky_write", { path: file("d"), text: "w" });
  await s.invoke("flaky_write", { path: file("e"), text: "e" });
  fs.writeFileSync(file("d"), "by hand");
  await s.invoke("write_file", { path: file("d"), text: "w" });
  return { fp, s, start, file };
}

/** Rolls back to `to` while flaky_write's undo fails: write_file's undo puts the hand edit back, then the move stops. */
async function stopped(rollback: () => Promise<unknown>, times = 1) {
  broken = true;
  try {
    for (let i = 0; i < times; i++) expect(await rejectionOf(rollback())).toMatchObject({ code: "UNDO_FAILED" });
  } finally {
    broken = false;
  }
}

for (const walk of [false, true]) {
  const how = walk ? "without a watcher" : "with a watcher where there is one";
  for (const between of ["nothing", "a prune", "a second stop"] as const)
    it(`a stopped conversation rewind called again after ${between} keeps the hand edit put back (${how})`, async () => {
      const { fp, s, start, file } = await started(walk);
      const rollback = () => s.rollback(start.id, { scope: "conversation" });
      await stopped(rollback, between === "a second stop" ? 2 : 1);
      expect(readOrNull(file("d"))).toBe("by hand");
      if (between === "a prune") await fp.prune();
      // Called again, it goes on: the first flaky_write's undo, which would delete d, leaves the hand edit.
      const moved = await rollback();
      expect(moved.undone.map((t) => t.tool)).toEqual(["flaky_write", "flaky_write"]);
      expect(readOrNull(file("d"))).toBe("by hand");
      expect(readOrNull(file("e"))).toBeNull();
      // Finished, no move's journal is kept for the next one.
      await fp.prune();
      expect((await fp.prune()).moves).toBe(0);
    });
}
