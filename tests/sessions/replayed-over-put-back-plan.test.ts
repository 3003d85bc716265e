// A "both" move whose undo of a call a replay applied may put back the hand edit that call's first run found, which a
// replay of the move then writes: the move stops there, forced or not, and its plan says it may (`mayStop`), as it
// lists the file in `files.mayKeep` (review 2, seed 1016: the plan said nothing would stop it).
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

const undoToPrevious = ({ args, result }: { args: { path?: string; to?: string }; result: { previous: string | null } }) => {
  const at = (args.to ?? args.path)!;
  if (result.previous === null) fs.rmSync(at, { force: true });
  else fs.writeFileSync(at, result.previous);
};
const appendFile = defineTool<{ path: string; text: string }, { previous: string | null }>({
  name: "append_file",
  effects: "workspace",
  run: ({ path: at, text }) => {
    const previous = readOrNull(at);
    fs.appendFileSync(at, text);
    return { previous };
  },
  undo: undoToPrevious,
});
const copyFile = defineTool<{ from: string; to: string }, { previous: string | null }>({
  name: "copy_file",
  effects: "workspace",
  run: ({ from, to }) => {
    const previous = readOrNull(to);
    fs.copyFileSync(from, to);
    return { previous };
  },
  undo: undoToPrevious,
});

it("plans the stop over a hand edit a replayed call's undo may put back", async () => {
  const ws = tempDir("forkpoint-replayed-over-");
  fs.mkdirSync(path.join(ws, "sub"));
  const b = path.join(ws, "b.txt");
  const e = path.join(ws, "sub", "e.txt");
  const { fp } = dbs.open({ tools: [writeFileTool(), appendFile, copyFile] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.append({ role: "user", content: "go" });
  await s.attachWorkspace(ws);
  const first = (await s.info()).currentBranchId;
  await s.invoke("write_file", { path: b, text: "T1." });
  const cp1 = await s.checkpoint({ name: "cp1" });
  fs.writeFileSync(e, "HAND");
  await s.invoke("write_file", { path: e, text: "T2." });
  await s.rollback(cp1.id); // conversation: its undo puts the hand edit back
  expect(readOrNull(e)).toBe("HAND");
  const second = (await s.info()).currentBranchId;
  await s.invoke("append_file", { path: e, text: "T3." });
  await s.invoke("copy_file", { from: b, to: e });
  expect((await s.plan({ branchId: first, scope: "both" })).blocked).toContain("sub/e.txt");
  await rejectionOf(s.switchBranch(first, { scope: "both", force: true }));
  await s.switchBranch(second, { scope: "both", force: true });

  const plan = await s.plan({ branchId: first, scope: "both" });
  expect(plan.files?.mayKeep).toEqual(["sub/e.txt"]);
  expect(plan.blocked).toBeUndefined();
  expect(plan.mayStop).toContain("sub/e.txt");
  const stop = await rejectionOf(s.switchBranch(first, { scope: "both", force: true }));
  expect(stop).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(stop.message).toContain("(sub/e.txt)");
  expect(readOrNull(e)).toBe("HAND");
});
