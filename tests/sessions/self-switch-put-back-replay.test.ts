// A "both" switch to the current branch whose undo puts a hand edit back (its call's run found it) and whose replay
// then writes that file stops before the replay (WORKSPACE_DRIFT), as a "both" move's files step does: called again,
// refused unforced, or with force the hand edit is saved in a checkpoint first; never written over unsaved.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool, type Forkpoint } from "../../src/index.js";
import { readOrNull, tempDir, type WriteArgs, type WriteResult } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** The tools whose undo fails while named here. */
const broken = new Set<string>();
const writeTool = (name: string) =>
  defineTool<WriteArgs, WriteResult>({
    name,
    effects: "workspace",
    run: (args) => {
      const previous = readOrNull(args.path);
      fs.writeFileSync(args.path, args.text);
      return { previous };
    },
    undo: ({ args, result }) => {
      if (broken.has(name)) throw new Error("broken");
      if (result.previous === null) fs.rmSync(args.path, { force: true });
      else fs.writeFileSync(args.path, result.previous);
    },
  });

/** On branch M with branch B's two calls left applied (their undos failed under "continue"), d written by B over a hand edit. */
async function leftOnM() {
  const ws = tempDir("forkpoint-self-put-back-");
  const fp: Forkpoint = dbs.open({ tools: [writeTool("write_file"), writeTool("flaky_write")] as never[] }).fp;
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const file = (rel: string) => path.join(ws, rel);
  const cp0 = await s.checkpoint({ name: "cp0" });
  const M = (await s.info()).currentBranchId;
  await s.invoke("write_file", { path: file("d"), text: "x2" });
  await s.rollback(cp0.id, { scope: "both" });
  await s.invoke("flaky_write", { path: file("e"), text: "e" });
  fs.writeFileSync(file("d"), "by hand");
  await s.invoke("write_file", { path: file("d"), text: "w" });
  broken.add("write_file").add("flaky_write");
  try {
    await s.switchBranch(M, { scope: "both", force: true, onUndoError: "continue" });
  } finally {
    broken.clear();
  }
  expect((await s.info()).currentBranchId).toBe(M);
  return { s, M, cp0, file };
}

it("a forced self switch stops before a replay over a hand edit its undo put back; forced again, saves it first", async () => {
  const { s, M, cp0, file } = await leftOnM();
  const stopped = await rejectionOf(s.switchBranch(M, { scope: "both", force: true }));
  expect(stopped).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect((stopped as Error).message).toContain("(d)");
  expect(readOrNull(file("d"))).toBe("by hand");

  // Unforced, refused again: nothing written over.
  expect(await rejectionOf(s.switchBranch(M, { scope: "both" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(file("d"))).toBe("by hand");

  const moved = await s.switchBranch(M, { scope: "both", force: true });
  expect(moved.savedDrift?.files).toEqual(["d"]);
  expect((await s.diffFiles(cp0.id, moved.savedDrift!.checkpointId)).patch).toContain("+by hand");
  expect(readOrNull(file("d"))).toBe("x2");
  expect(readOrNull(file("e"))).toBeNull();
  expect((await s.toolTrack()).map((t) => [t.tool, t.applied])).toEqual([["write_file", true]]);
});
