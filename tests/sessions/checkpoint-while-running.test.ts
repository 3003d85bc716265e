// A checkpoint taken while a tool call runs: from its own handler, its files lack the call's effect and a "both" move
// restoring it replays the call on top; from another handle of this process, it waits for the call's turn, and once
// that wait is spent it is refused (CALL_IN_PROGRESS) rather than read the call half done.
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { defineTool, type Forkpoint, type SessionHandle } from "../../src/index.js";
import { TURN_WAIT_MS, turnWait } from "../../src/sessions/workspace/run-turns.js";
import { readOrNull } from "../fixtures/file-tools.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";
import { engineOf } from "../../src/sessions/forkpoint.js";

let dir: string;
let ws: string;
const opened: Forkpoint[] = [];
const out = () => readOrNull(path.join(ws, "out"));

// The other handle's checkpoint waits for the workspace's run turn that the held call keeps, then is refused:
// after 1 s here, not 10 (nothing else in this file runs beside another run).
beforeAll(() => void (turnWait.ms = 1_000));
afterAll(() => void (turnWait.ms = TURN_WAIT_MS));

beforeEach(() => {
  dir = makeTempDir("forkpoint-checkpoint-running-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
});
afterEach(async () => {
  for (const fp of opened.splice(0)) await fp.close();
  removeDir(dir);
});

/** After `start`, the call whose run took checkpoint `inside`: a rollback to `start`, then to `inside`, then back. */
async function movesThrough(s: SessionHandle, start: string, inside: string, root: string) {
  const applied = async () => (await s.toolTrack({ branchId: root })).at(-1)!.applied;
  await s.rollback(start, { scope: "both" });
  expect([out(), await applied()]).toEqual([null, false]);
  const moved = await s.rollback(inside, { scope: "both" });
  expect(moved.replayed).toHaveLength(1);
  expect([out(), await applied()]).toEqual(["result", true]);
  await s.switchBranch(root, { scope: "both" });
  expect([out(), await applied()]).toEqual(["result", true]);
}

it("a checkpoint its own handler takes before writing, restored, gets the call replayed", async () => {
  let s: SessionHandle;
  let inside = "";
  const saveThenWrite = defineTool<{ text: string }, { previous: null }>({
    name: "save_then_write",
    run: async ({ text }, ctx) => {
      if (!ctx.replay) inside = (await s.checkpoint({ name: "inside" })).id;
      fs.writeFileSync(path.join(ws, "out"), text);
      return { previous: null };
    },
    undo: async () => fs.rmSync(path.join(ws, "out"), { force: true }),
  });
  const fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [saveThenWrite] });
  opened.push(fp);
  s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  const root = (await s.info()).currentBranchId;
  await s.invoke("save_then_write", { text: "result" });
  await movesThrough(s, start.id, inside, root);
});

it("a checkpoint another handle of this process asks for while a call runs past the wait is refused", async () => {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let started: () => void = () => undefined;
  const running = new Promise<void>((resolve) => (started = resolve));
  const db = path.join(dir, "forkpoint.db");
  // The call runs on `a`: it writes half its effect, then waits for the gate before it writes the rest.
  const writeLater = defineTool<{ text: string }, { previous: null }>({
    name: "held_write",
    run: async ({ text }, ctx) => {
      fs.writeFileSync(path.join(ws, "out"), "half\n");
      if (!ctx.replay) {
        started();
        await gate;
      }
      fs.writeFileSync(path.join(ws, "out"), text);
      return { previous: null };
    },
    undo: async () => fs.rmSync(path.join(ws, "out"), { force: true }),
  });
  const a = openForkpoint({ path: db, tools: [writeLater] });
  const b = openForkpoint({ path: db, tools: [writeLater] });
  opened.push(a, b);
  const s = await a.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  const root = (await s.info()).currentBranchId;
  const call = s.invoke("held_write", { text: "result" });
  await running;
  const other = await b.getSession(s.id, { userId: "u" });
  // Files read now would hold half the call's effect: refused once the turn's wait is spent, nothing written.
  await expect(other.checkpoint({ name: "inside" })).rejects.toMatchObject({ code: "CALL_IN_PROGRESS" });
  expect((await s.listCheckpoints()).items.map((c) => c.name)).toEqual(["start"]);
  release();
  await call;
  // The refusal left the call's run its own: the paths it changed are recorded (a run gone ahead beside would not be).
  const id = (await s.toolTrack()).at(-1)!.id;
  expect(await engineOf(a).ctx.store.read((tx) => tx.callPaths(id))).toEqual(["out"]);
  const after = await other.checkpoint({ name: "after" });
  // No false drift: the call's whole effect is its own, and the checkpoint holds it whole.
  await s.rollback(start.id, { scope: "both" });
  expect(out()).toBeNull();
  await s.rollback(after.id, { scope: "both" });
  expect(out()).toBe("result");
  await s.switchBranch(root, { scope: "both" });
  expect(out()).toBe("result");
});
