// A move with scope "both" stops compensating at a kept call it cannot undo, as one with scope "conversation" does. A
// held append (made `after` a question, off the current branch) is applied, then an irreversible note on the current
// branch appends to the same file; rolling back to a checkpoint taken after the note leaves both lines, the append in
// `skipped` (refused with IRREVERSIBLE under `refuseIrreversible`, as `plan()` foretells). When the file lies in the
// workspace and the checkpoint's files hold both calls, the append is covered: nothing is undone or skipped.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { ForkpointError, type Forkpoint } from "../../src/index.js";
import { appendLineTool, readOrNull, tempDir, noteLineTool } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** A held append to `log` (off the current branch), then an irreversible note to it on the current branch. */
async function heldThenNote(fp: Forkpoint, ws: string, log: string) {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const [question] = await s.append({ role: "user", content: "note x" });
  const start = await s.checkpoint({ name: "start" });
  await s.append({ role: "user", content: "another tab" });
  await s.rollback(start.id, { scope: "both" });
  await s.append({ role: "user", content: "note y" });
  await s.invoke("append_line", { path: log, line: "x" }, { after: question!.id });
  await s.invoke("note_line", { path: log, line: "y" });
  const target = await s.checkpoint({ name: "after the note" });
  return { s, target };
}

/** `inside`: the file lies in the workspace (its snapshots hold it), else beside it. */
function world(inside = false) {
  const root = tempDir("forkpoint-lifo-both-");
  const ws = path.join(root, "ws");
  fs.mkdirSync(ws);
  const log = path.join(inside ? ws : root, "log");
  const { fp } = dbs.open({ tools: [appendLineTool(), noteLineTool] });
  return { fp, ws, log };
}

it("with scope conversation: the append under the irreversible note stays, skipped", async () => {
  const { fp, ws, log } = world();
  const { s, target } = await heldThenNote(fp, ws, log);
  const moved = await s.rollback(target.id, { scope: "conversation" });
  expect(readOrNull(log)).toBe("x\ny\n");
  expect(moved.skipped.map((t) => t.tool)).toContain("append_line");
});

it("with scope both: the append under the irreversible note stays, skipped (the note's line is not lost)", async () => {
  const { fp, ws, log } = world();
  const { s, target } = await heldThenNote(fp, ws, log);
  const moved = await s.rollback(target.id, { scope: "both" });
  expect(readOrNull(log)).toBe("x\ny\n");
  expect(moved.skipped.map((t) => t.tool)).toContain("append_line");
});

it("with scope both and refuseIrreversible: refused before anything runs, as plan() foretells", async () => {
  const { fp, ws, log } = world();
  const { s, target } = await heldThenNote(fp, ws, log);
  const planned = await s.plan({ checkpointId: target.id });
  expect(planned.skipped.map((t) => t.tool)).toContain("append_line");
  expect(planned.undone).toEqual([]);
  const refused = await s.rollback(target.id, { scope: "both", refuseIrreversible: true }).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(ForkpointError);
  expect((refused as ForkpointError).code).toBe("IRREVERSIBLE");
  expect(readOrNull(log)).toBe("x\ny\n");
});

it("with scope both, the file in the workspace: the snapshot holds both calls, so nothing is undone or skipped", async () => {
  const { fp, ws, log } = world(true);
  const { s, target } = await heldThenNote(fp, ws, log);
  const moved = await s.rollback(target.id, { scope: "both" });
  expect(readOrNull(log)).toBe("x\ny\n");
  expect(moved.undone).toEqual([]);
  expect(moved.skipped.map((t) => t.tool)).not.toContain("append_line");
});
