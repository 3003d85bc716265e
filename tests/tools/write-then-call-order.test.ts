// A handle's calls on a session commit in the order they were made, also while the first of them waits for a move of
// the session running in another handle: a tool call or a move made right after a waiting write goes after it.
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { openForkpoint } from "../fixtures/backend.js";
import { tempDir, writeFileTool } from "../fixtures/file-tools.js";

const USER = "dana";
const opened: Forkpoint[] = [];

afterEach(async () => {
  for (const fp of opened.splice(0)) await fp.close().catch(() => undefined);
});

/** Handle `a` rolls a session with `calls` write_file calls back, each undo slow; `b` is another handle on it. */
async function moving(calls: number) {
  const dir = tempDir("forkpoint-write-call-order-");
  const db = path.join(dir, "forkpoint.db");
  const a = openForkpoint({ path: db, tools: [writeFileTool({ undoDelayMs: 40 })] });
  const b = openForkpoint({ path: db, tools: [writeFileTool()] });
  opened.push(a, b);
  const s = await a.createSession({ userId: USER });
  await s.append({ role: "user", content: "q" });
  const cp = await s.checkpoint({ name: "q" });
  for (let i = 0; i < calls; i++) await s.invoke("write_file", { path: path.join(dir, `f${i}.txt`), text: "x" });
  const t = await b.getSession(s.id, { userId: USER });
  const undone = new Promise((resolve) => a.on("undo", resolve));
  const move = s.rollback(cp.id);
  await undone;
  return { dir, s, t, move };
}

describe("a call made right after a write waiting on another handle's move", () => {
  it("invoke: the write lands first, then the call, both on the branch the move made current", async () => {
    const { dir, t, move } = await moving(4);
    const written = t.append({ role: "user", content: "A" });
    const invoked = t.invoke("write_file", { path: path.join(dir, "g.txt"), text: "y" });
    const later = t.append({ role: "user", content: "B" });
    const [moved, [a], , [b]] = await Promise.all([move, written, invoked, later]);
    expect([a!.branchId, b!.branchId]).toEqual([moved.branch.id, moved.branch.id]);
    const track = await t.toolTrack();
    const mine = track.find((c) => (c.args as { path: string }).path.endsWith("g.txt"))!;
    expect(mine.branchId).toBe(moved.branch.id);
    expect([a!.position, mine.position, b!.position]).toEqual([2, 3, 4]);
  });

  it("a move: the write lands first, on the branch the other move made current, and the move comes after it", async () => {
    const { t, move } = await moving(4);
    const written = t.append({ role: "user", content: "A" });
    const undone = t.undo();
    const [moved, [a]] = await Promise.all([move, written]);
    await undone;
    expect(a!.branchId).toBe(moved.branch.id);
    // The undo came after the write: it left the branch holding it.
    expect((await t.history({ branchId: moved.branch.id })).map((m) => m.content)).toEqual(["q", "A"]);
    expect((await t.info()).currentBranchId).not.toBe(moved.branch.id);
  });
});
