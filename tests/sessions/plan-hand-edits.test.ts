// plan() over hand edits, as the move then does it: a "both" move's undo that puts a hand edit back keeps it (the plan
// said it writes the target's content there), and a "conversation" move refuses drift its undos would write over (the
// plan said none); a replay over a hand edit put back stops the move, forced or not (the plan said nothing of it).
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint, SessionHandle } from "../../src/index.js";
import { readOrNull, writeFileTool } from "../fixtures/file-tools.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
const file = (rel: string) => path.join(ws, rel);

beforeEach(() => {
  dir = makeTempDir("forkpoint-plan-hand-edits-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [writeFileTool()] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

/** A session whose workspace holds a.txt "v0" at checkpoint c0. */
async function started(): Promise<{ s: SessionHandle; c0: string }> {
  fs.writeFileSync(file("a.txt"), "v0\n");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const c0 = await s.checkpoint({ name: "c0" });
  await s.append({ role: "user", content: "go" });
  return { s, c0: c0.id };
}

it('"both": a hand edit made before a call, put back by its undo, is planned kept, not written', async () => {
  const { s, c0 } = await started();
  fs.writeFileSync(file("a.txt"), "by hand\n");
  await s.invoke("write_file", { path: file("a.txt"), text: "agent\n" });
  await s.checkpoint({ name: "c1" });

  const plan = await s.plan({ checkpointId: c0, scope: "both" });
  expect(plan).toMatchObject({ files: { written: [], deleted: [], kept: ["a.txt"] }, drift: [] });
  expect(plan.blocked).toBeUndefined();
  const moved = await s.rollback(c0, { scope: "both" });
  expect(moved.files).toEqual(plan.files);
  expect(readOrNull(file("a.txt"))).toBe("by hand\n");
});

it('"both": with drift too, the forced move keeps the hand edit as planned, and deletes the rest', async () => {
  const { s, c0 } = await started();
  fs.writeFileSync(file("a.txt"), "by hand\n");
  await s.invoke("write_file", { path: file("a.txt"), text: "agent\n" });
  await s.invoke("write_file", { path: file("b.txt"), text: "b\n" });

  const plan = await s.plan({ checkpointId: c0, scope: "both" });
  // b.txt is deleted by its call's undo before the files step: the move's result may list it no more.
  expect(plan).toMatchObject({ files: { written: [], deleted: ["b.txt"], kept: ["a.txt"] }, drift: ["a.txt"] });
  expect(await rejectionOf(s.rollback(c0, { scope: "both" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  const moved = await s.rollback(c0, { scope: "both", force: true });
  expect(moved.files?.kept).toEqual(plan.files?.kept);
  expect(moved.files?.written).toEqual([]);
  expect(moved.savedDrift?.files).toEqual(plan.drift);
  expect([readOrNull(file("a.txt")), readOrNull(file("b.txt"))]).toEqual(["by hand\n", null]);
});

it('"both": a hand edit the file holds again is saved by force first, so the restore writes over it, as planned', async () => {
  const { s, c0 } = await started();
  fs.writeFileSync(file("a.txt"), "by hand\n");
  await s.invoke("write_file", { path: file("a.txt"), text: "agent\n" });
  fs.writeFileSync(file("a.txt"), "by hand\n");

  const plan = await s.plan({ checkpointId: c0, scope: "both" });
  expect(plan).toMatchObject({ files: { written: ["a.txt"], deleted: [] }, drift: ["a.txt"] });
  expect(plan.files?.kept).toBeUndefined();
  const moved = await s.rollback(c0, { scope: "both", force: true });
  expect(moved.files).toEqual(plan.files);
  expect(readOrNull(file("a.txt"))).toBe("v0\n");
});

it('"conversation": a save by hand after a call its undo writes over is the drift planned, as the move refuses it', async () => {
  const { s, c0 } = await started();
  await s.invoke("write_file", { path: file("a.txt"), text: "agent\n" });
  fs.writeFileSync(file("a.txt"), "mine\n");

  const plan = await s.plan({ checkpointId: c0 });
  expect(plan.drift).toEqual(["a.txt"]);
  expect(plan.blocked).toBeUndefined();
  expect(await rejectionOf(s.rollback(c0))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(file("a.txt"))).toBe("mine\n");
  const forced = await s.rollback(c0, { force: true });
  expect(forced.savedDrift?.files).toEqual(plan.drift);
  expect(readOrNull(file("a.txt"))).toBe("v0\n");
});

it('"conversation": a hand edit made before the call, which its undo puts back, is no drift, and the move goes', async () => {
  const { s, c0 } = await started();
  fs.writeFileSync(file("a.txt"), "by hand\n");
  await s.invoke("write_file", { path: file("a.txt"), text: "agent\n" });

  const plan = await s.plan({ checkpointId: c0, scope: "conversation" });
  expect(plan.drift).toEqual([]);
  const moved = await s.rollback(c0);
  expect(moved.savedDrift).toBeUndefined();
  expect(readOrNull(file("a.txt"))).toBe("by hand\n");
});

it.each(["conversation", "both"] as const)(
  "%s: a replay over a hand edit an undo puts back is planned blocked, and the move is refused even forced",
  async (scope) => {
    const { s, c0 } = await started();
    await s.invoke("write_file", { path: file("a.txt"), text: "theirs\n" });
    const other = (await s.info()).currentBranchId;
    await s.rollback(c0, { scope: "both" });
    fs.writeFileSync(file("a.txt"), "by hand\n");
    await s.invoke("write_file", { path: file("a.txt"), text: "agent\n" });

    const plan = await s.plan({ branchId: other, scope });
    expect(plan.blocked).toMatch(/by hand to a\.txt|to a\.txt in the workspace .* \(by hand/);
    expect(await rejectionOf(s.switchBranch(other, { scope, force: true }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  },
);
