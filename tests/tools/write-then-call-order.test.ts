// A handle's calls on a session commit in the order they were made, also while the first of them waits for a move of
// the session running in another handle: a tool call or a move made right after a waiting write goes after it.
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { defineTool, type Forkpoint } from "../../src/index.js";
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

describe("a write refused waiting for another handle's move", () => {
  it("refuses what the handle made after it, a tool call between them included: nothing lands after it", async () => {
    const dir = tempDir("forkpoint-refused-chain-");
    const db = path.join(dir, "forkpoint.db");
    const a = openForkpoint({ path: db, tools: [writeFileTool({ undoDelayMs: 100 })] });
    const b = openForkpoint({ path: db, tools: [writeFileTool()], busyTimeoutMs: 350 });
    opened.push(a, b);
    const s = await a.createSession({ userId: USER });
    await s.append({ role: "user", content: "q" });
    const cp = await s.checkpoint({ name: "q" });
    for (let i = 0; i < 6; i++) await s.invoke("write_file", { path: path.join(dir, `f${i}.txt`), text: "x" });
    const t = await b.getSession(s.id, { userId: USER });
    const undone = new Promise((resolve) => a.on("undo", resolve));
    const move = s.rollback(cp.id);
    await undone;
    const codeOf = (p: Promise<unknown>) =>
      p.then(
        () => "landed",
        (e: { code?: string }) => e.code,
      );
    const told = await Promise.all([
      codeOf(t.append({ role: "user", content: "W1" })),
      codeOf(t.invoke("write_file", { path: path.join(dir, "g.txt"), text: "y" })),
      codeOf(t.append({ role: "user", content: "W2" })),
      codeOf(t.undo()),
      codeOf(t.setState({ n: 1 })),
    ]);
    await move;
    expect(told).toEqual(Array(5).fill("MOVE_IN_PROGRESS"));
    expect((await s.history()).map((m) => m.content)).toEqual(["q"]);
    expect(await s.getState()).toEqual({});
  });
});

describe("a tool handler's calls on another session", () => {
  it("keep that session's order: they go after its writes made before them", async () => {
    const dir = tempDir("forkpoint-handler-other-");
    let other: Awaited<ReturnType<Forkpoint["createSession"]>> | undefined;
    const told: string[] = [];
    const bridge = defineTool({
      name: "bridge",
      run: async () => {
        const [m] = await other!.append({ role: "user", content: "from the handler" });
        told.push(`append ${m!.position}`);
        await other!.invoke("write_file", { path: path.join(dir, "h.txt"), text: "h" });
        return null;
      },
    });
    const fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [writeFileTool({ undoDelayMs: 40 }), bridge] });
    opened.push(fp);
    const s1 = await fp.createSession({ userId: USER });
    other = await fp.createSession({ userId: USER });
    await other.append({ role: "user", content: "q" });
    const cp = await other.checkpoint({ name: "q" });
    for (let i = 0; i < 3; i++) await other.invoke("write_file", { path: path.join(dir, `f${i}.txt`), text: "x" });
    const undone = new Promise((resolve) => fp.on("undo", resolve));
    const move = other.rollback(cp.id);
    await undone;
    const before = other.append({ role: "user", content: "made before" });
    await s1.invoke("bridge", {});
    const [moved, [w1]] = await Promise.all([move, before]);
    expect(w1!.branchId).toBe(moved.branch.id);
    expect((await other.history()).map((m) => [m.position, m.content])).toEqual([
      [1, "q"],
      [2, "made before"],
      [3, "from the handler"],
    ]);
    expect((await other.toolTrack()).at(-1)!.position).toBe(4);
    expect(told).toEqual(["append 3"]);
  });
});

describe("a session with a workspace, calls made without awaiting", () => {
  async function withWorkspace() {
    const dir = tempDir("forkpoint-ws-order-");
    const ws = path.join(dir, "ws");
    fs.mkdirSync(ws);
    fs.writeFileSync(path.join(ws, "plan.md"), "draft 1\n");
    const fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [writeFileTool()] });
    opened.push(fp);
    const s = await fp.createSession({ userId: USER });
    await s.attachWorkspace(ws);
    await s.append({ role: "user", content: "q" });
    return { s, ws, cp: await s.checkpoint({ name: "q" }) };
  }

  it("a write made after a move lands on the branch the move makes current", async () => {
    const { s, ws, cp } = await withWorkspace();
    await s.invoke("write_file", { path: path.join(ws, "plan.md"), text: "draft 2\n" });
    await s.append({ role: "user", content: "old" });
    for (const scope of ["both", "conversation"] as const) {
      const moving = s.rollback(cp.id, { scope });
      const written = s.append({ role: "user", content: `after ${scope}` });
      const [moved, [w]] = await Promise.all([moving, written]);
      expect(w!.branchId).toBe(moved.branch.id);
      expect((await s.history()).map((m) => m.content)).toEqual(["q", `after ${scope}`]);
    }
  });

  it("a checkpoint made before a tool call or a move holds what came before them, at its place", async () => {
    const { s, ws } = await withWorkspace();
    const main = (await s.info()).currentBranchId;
    const taken = s.checkpoint({ name: "before the call" });
    const invoked = s.invoke("write_file", { path: path.join(ws, "plan.md"), text: "draft 2\n" });
    const [cp] = await Promise.all([taken, invoked]);
    const call = (await s.toolTrack()).at(-1)!;
    expect([cp.branchId, cp.position + 1]).toEqual([main, call.position]);
    expect(await s.diffFiles(cp.id, "disk")).toMatchObject({ modified: ["plan.md"] });
    const again = s.checkpoint({ name: "before the move" });
    const appended = s.append({ role: "user", content: "after the checkpoint" });
    const moved = s.rollback(cp.id, { scope: "both" });
    const [second, [m]] = await Promise.all([again, appended, moved]);
    expect([second.branchId, m!.branchId, m!.position]).toEqual([main, main, second.position + 1]);
    expect(fs.readFileSync(path.join(ws, "plan.md"), "utf8")).toBe("draft 1\n");
  });
});
