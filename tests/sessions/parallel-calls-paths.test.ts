// Review of issue 32 (round 4): tool calls running at once on one workspace (a step's parallel calls, two handles) are
// each credited with their own file changes only: a call that writes outside the workspace while another changes a
// file in it stays an outside call, undone and replayed through its tool by moves with files.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { defineTool, type SessionHandle } from "../../src/index.js";
import { readOrNull, tagLineTool, tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** slow_out: appends a line to a file outside the workspace after a while; undo removes that line. */
const slowOut = defineTool<{ path: string; line: string }, null>({
  name: "slow_out",
  run: async (args) => {
    await new Promise((r) => setTimeout(r, 150));
    fs.appendFileSync(args.path, `${args.line}\n`);
    return null;
  },
  undo: ({ args }) => {
    const kept = (readOrNull(args.path) ?? "").split("\n").filter((l) => l !== "" && l !== args.line);
    fs.writeFileSync(args.path, kept.map((l) => `${l}\n`).join(""));
  },
});

/** Runs slow_out on `b` while `a` tags a workspace file, then rolls back past both and switches back. */
async function roundTrip(a: SessionHandle, b: SessionHandle, ws: string) {
  const inside = path.join(ws, "tag.txt");
  const outside = path.join(path.dirname(ws), "out.txt");
  const c0 = await a.checkpoint({ name: "c0" });
  await a.append({ role: "user", content: "go" });
  const slow = b.invoke("slow_out", { path: outside, line: "OUT" });
  await new Promise((r) => setTimeout(r, 30));
  await a.invoke("tag_line", { path: inside, line: "IN" });
  await slow;
  await a.checkpoint({ name: "both done" });
  const first = (await a.info()).currentBranchId;
  await a.rollback(c0.id, { scope: "both" });
  expect([readOrNull(outside), readOrNull(inside)]).toEqual(["", null]);
  const back = await a.switchBranch(first, { scope: "both" });
  expect(back.replayed.map((t) => t.tool)).toEqual(["slow_out"]);
  expect((await a.toolTrack()).map((t) => `${t.tool}:${t.applied}`)).toEqual(["slow_out:true", "tag_line:true"]);
  expect(readOrNull(outside)).toBe("OUT\n");
  expect(readOrNull(inside)).toMatch(/^IN#\d+\n$/);
}

async function setUp() {
  const opened = dbs.open({ tools: [tagLineTool(), slowOut] });
  const ws = path.join(tempDir("forkpoint-parallel-paths-"), "ws");
  fs.mkdirSync(ws);
  const s = await opened.fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  return { ...opened, s, ws };
}

describe("calls running at once on one workspace", () => {
  it("on one handle: the outside call is replayed by a switch back, its line there once", async () => {
    const { s, ws } = await setUp();
    await roundTrip(s, s, ws);
  });

  it("on two Forkpoints of one database: the same", async () => {
    const { s, ws, path: file } = await setUp();
    const other = dbs.open({ path: file, tools: [tagLineTool(), slowOut] });
    await roundTrip(s, await other.fp.getSession(s.id, { userId: "u" }), ws);
  });

  it("a call a handler makes from inside its run runs within it, not after it", async () => {
    const inner = tagLineTool();
    const outer = defineTool<{ path: string }, string>({
      name: "outer",
      run: async (args, ctx) => {
        const s = await opened.fp.getSession(ctx.sessionId, { userId: ctx.userId });
        await s.invoke("tag_line", { path: args.path, line: "nested" });
        return "done";
      },
    });
    const opened = dbs.open({ tools: [inner, outer] });
    const ws = path.join(tempDir("forkpoint-parallel-paths-"), "ws");
    fs.mkdirSync(ws);
    const s = await opened.fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    expect(await s.invoke("outer", { path: path.join(ws, "n.txt") })).toBe("done");
    expect(readOrNull(path.join(ws, "n.txt"))).toMatch(/^nested#\d+\n$/);
  });

  it("a handler that outlives its time limit keeps the turn until it ends: the next call's changes are its own", async () => {
    // The second call starts once this one runs (a fixed delay let it take the turn first on a loaded machine).
    let running!: () => void;
    const started = new Promise<void>((r) => (running = r));
    const late = defineTool<{ path: string }, null>({
      name: "late_write",
      timeoutMs: 50,
      run: async (args) => {
        running();
        await new Promise((r) => setTimeout(r, 250));
        fs.writeFileSync(args.path, "late\n");
        return null;
      },
    });
    const opened = dbs.open({ tools: [late, slowOut] });
    const ws = path.join(tempDir("forkpoint-parallel-paths-"), "ws");
    fs.mkdirSync(ws);
    const s = await opened.fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const outside = path.join(path.dirname(ws), "out.txt");
    const c0 = await s.checkpoint({ name: "c0" });
    await s.append({ role: "user", content: "go" });
    const [timedOut, out] = await Promise.allSettled([
      s.invoke("late_write", { path: path.join(ws, "late.txt") }),
      started.then(() => s.invoke("slow_out", { path: outside, line: "X" })),
    ]);
    expect([timedOut.status, out.status]).toEqual(["rejected", "fulfilled"]);
    expect(readOrNull(path.join(ws, "late.txt"))).toBe("late\n");
    // The late write is no call's: the checkpoint captures it with the rest of the files.
    await s.checkpoint({ name: "after" });
    const br = (await s.info()).currentBranchId;
    await s.rollback(c0.id, { scope: "both", force: true });
    expect(readOrNull(outside)).toBe("");
    const back = await s.switchBranch(br, { scope: "both" });
    expect(back.replayed.map((t) => t.tool)).toEqual(["slow_out"]);
    expect(readOrNull(outside)).toBe("X\n");
  });
});
