// plan() of a "both" switch to the current branch tells what the switch does with the hand edits its undos put back:
// kept (left as they are), or `blocked` where a replay then writes over one (the switch stops there, forced or not).
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

/**
 * On branch M with branch B's call over a hand edit of d left applied (its undo failed under "continue"); M's own call
 * (undone, to replay) writes `mFile`.
 */
async function leftOnM(mFile: string) {
  const ws = tempDir("forkpoint-self-plan-");
  const fp: Forkpoint = dbs.open({ tools: [writeTool("write_file")] as never[] }).fp;
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const file = (rel: string) => path.join(ws, rel);
  const cp0 = await s.checkpoint({ name: "cp0" });
  const M = (await s.info()).currentBranchId;
  await s.invoke("write_file", { path: file(mFile), text: "x2" });
  await s.rollback(cp0.id, { scope: "both" });
  fs.writeFileSync(file("d"), "by hand");
  await s.invoke("write_file", { path: file("d"), text: "w" });
  broken.add("write_file");
  try {
    await s.switchBranch(M, { scope: "both", force: true, onUndoError: "continue" });
  } finally {
    broken.clear();
  }
  expect((await s.info()).currentBranchId).toBe(M);
  return { s, M, file };
}

it("plans a self switch whose undo puts a hand edit back as keeping it, as the switch does", async () => {
  const { s, M, file } = await leftOnM("f");
  const planned = await s.plan({ branchId: M, scope: "both" });
  expect(planned).toMatchObject({ files: { written: [], deleted: [], kept: ["d"] }, drift: [] });
  expect(planned.blocked).toBeUndefined();
  const moved = await s.switchBranch(M, { scope: "both" });
  expect(moved.savedDrift).toBeUndefined();
  expect([readOrNull(file("d")), readOrNull(file("f"))]).toEqual(["by hand", "x2"]);
});

it("plans a self switch whose replay writes over a hand edit its undo put back as blocked, as the switch stops", async () => {
  const { s, M, file } = await leftOnM("d");
  const planned = await s.plan({ branchId: M, scope: "both" });
  expect(planned.blocked).toContain("(WORKSPACE_DRIFT)");
  expect(planned.drift).toEqual([]);
  expect(await rejectionOf(s.switchBranch(M, { scope: "both", force: true }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(file("d"))).toBe("by hand");
});
