// Review of issue 32 (round 4): the calls a "both" move marks applied with its snapshot's files (on the target's
// lineage, and off it) are marked in the order they were made, so a later undo takes them back last first.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { appendLineTool, readOrNull, tempDir, type ToolCallRecord } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** A session over a workspace, checkpoint c0, then call A appended to app.txt and checkpoint cA. */
async function appendedA() {
  const calls: ToolCallRecord[] = [];
  const { fp } = dbs.open({ tools: [appendLineTool({ calls })] });
  const ws = path.join(tempDir("forkpoint-remark-lifo-"), "ws");
  fs.mkdirSync(ws);
  const file = path.join(ws, "app.txt");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const c0 = await s.checkpoint({ name: "c0" });
  await s.append({ role: "user", content: "m1" });
  await s.invoke("append_line", { path: file, line: "A" });
  const cA = await s.checkpoint({ name: "cA" });
  return { fp, s, file, calls, c0, cA };
}

it("a call held off the lineage and one made after it, marked by one restore, are undone newest first", async () => {
  const { fp, s, file, calls, c0, cA } = await appendedA();
  await s.rollback(c0.id, { scope: "both" });
  const b1 = (await s.info()).currentBranchId;
  // The files hold A again (applied, off the lineage); B is appended after it.
  await s.rollback(cA.id, { scope: "files" });
  await s.invoke("append_line", { path: file, line: "B" });
  await s.checkpoint({ name: "cAB" });
  await s.rollback(c0.id, { scope: "both" });
  await s.switchBranch(b1, { scope: "both" });
  expect(readOrNull(file)).toBe("A\nB\n");

  calls.length = 0;
  await s.rollback(c0.id, { scope: "conversation" });
  expect(calls.filter((c) => c.op === "undo").map((c) => (c.args as { line: string }).line)).toEqual(["B", "A"]);
  expect(readOrNull(file)).toBe("");
  expect((await fp.verify({ sessionId: s.id })).ok).toBe(true);
});

for (const scope of ["both", "files"] as const)
  it(`a call re-marked for the application its snapshot holds keeps its place before the calls applied after it there (${scope})`, async () => {
    const { s, file, calls, c0, cA } = await appendedA();
    await s.invoke("append_line", { path: file, line: "B" });
    const cAB = await s.checkpoint({ name: "cAB" });
    const main = (await s.info()).currentBranchId;
    // A and B undone, then replayed: the world holds replays of them, the snapshot of cAB their first runs.
    await s.rollback(c0.id);
    await s.switchBranch(main);
    await s.rollback(cA.id);
    expect(readOrNull(file)).toBe("A\n");
    // B is marked applied with the files; A, held by its first run there, is marked again, before B.
    await s.rollback(cAB.id, { scope });
    expect(readOrNull(file)).toBe("A\nB\n");

    calls.length = 0;
    await s.rollback(c0.id, { scope: "conversation" });
    expect(calls.filter((c) => c.op === "undo").map((c) => (c.args as { line: string }).line)).toEqual(["B", "A"]);
    expect(readOrNull(file)).toBe("");
  });
