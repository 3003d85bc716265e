// Moves with scope "both" and tool calls on real files: the restored snapshot already holds the effects of the calls
// made before it, so those are not replayed (only marked applied); the calls being left are undone before the files
// are restored, where they find what they wrote; calls after the snapshot are replayed on top of it.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Forkpoint, SessionHandle } from "../../src/index.js";
import { appendLineTool, readOrNull, writeFileTool, type ToolCallRecord } from "../fixtures/file-tools.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
let calls: ToolCallRecord[];

const file = (rel: string) => path.join(ws, rel);

beforeEach(() => {
  dir = makeTempDir("forkpoint-tool-moves-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  calls = [];
});
afterEach(async () => {
  await fp?.close();
  removeDir(dir);
});

async function session(options: Parameters<typeof openForkpoint>[0] = {}): Promise<SessionHandle> {
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [appendLineTool({ calls }), writeFileTool({ calls })], ...options });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  return s;
}

const rootOf = async (s: SessionHandle) => (await s.branches()).find((b) => b.parentId === null)!;
const ops = () =>
  calls.map(
    (c) =>
      `${c.op}${c.replay ? " (replay)" : ""} ${(c.args as { line?: string; text?: string }).line ?? (c.args as { text: string }).text}`,
  );

describe('moves with scope "both" and tool calls', () => {
  it("switching back does not replay an append the restored snapshot already holds", async () => {
    fs.writeFileSync(file("log.txt"), "");
    const s = await session();
    const start = await s.checkpoint({ name: "start" });
    await s.invoke("append_line", { path: file("log.txt"), line: "a" });
    await s.checkpoint({ name: "after a" });
    const root = await rootOf(s);

    const away = await s.rollback(start.id, { scope: "both" });
    expect(away.undone.map((t) => t.tool)).toEqual(["append_line"]);
    expect(readOrNull(file("log.txt"))).toBe("");

    const back = await s.switchBranch(root.id, { scope: "both" });
    // "after a" captured the line: nothing to replay, the call counts as applied again.
    expect(back.replayed).toEqual([]);
    expect(readOrNull(file("log.txt"))).toBe("a\n");
    expect((await s.plan({ checkpointId: start.id })).undone.map((t) => t.tool)).toEqual(["append_line"]);

    // And away once more: the undo finds its line and takes it out.
    await s.rollback(start.id, { scope: "both" });
    expect(readOrNull(file("log.txt"))).toBe("");
    expect(ops()).toEqual(["run a", "undo a", "undo a"]);
  });

  it("a write's undo and redo leave what each checkpoint captured", async () => {
    fs.writeFileSync(file("f.txt"), "v1");
    const s = await session();
    const cp = await s.checkpoint({ name: "v1" });
    await s.invoke("write_file", { path: file("f.txt"), text: "v2" });
    await s.checkpoint({ name: "v2" });

    await s.rollback(cp.id, { scope: "both" });
    expect(readOrNull(file("f.txt"))).toBe("v1");
    await s.undo({ scope: "both" }); // back to the head with "v2"
    expect(readOrNull(file("f.txt"))).toBe("v2");
    await s.redo({ scope: "both" }); // the rollback again: the undo must put back "v1", not what a replay saw
    expect(readOrNull(file("f.txt"))).toBe("v1");
    await s.undo({ scope: "both" });
    expect(readOrNull(file("f.txt"))).toBe("v2");
    // Never replayed: the snapshots held its effect each time; each undo received the result of its only run.
    expect(calls.filter((c) => c.op === "run").map((c) => c.replay)).toEqual([false]);
    expect(calls.filter((c) => c.op === "undo").map((c) => c.result)).toEqual([{ previous: "v1" }, { previous: "v1" }]);
  });

  it("calls after the snapshot that the target shares with the world stay applied: only later ones are undone", async () => {
    fs.writeFileSync(file("log.txt"), "");
    // Automatic checkpoints capture no files: the snapshot for a rollback to one is the newest before it that did.
    const s = await session({ autoCheckpoint: { afterToolCalls: true } });
    await s.checkpoint({ name: "start" });
    await s.invoke("append_line", { path: file("log.txt"), line: "a" });
    const afterA = (await s.listCheckpoints()).items[0]!;
    expect(afterA.auto).toBe(true);
    await s.invoke("append_line", { path: file("log.txt"), line: "b" });
    expect(readOrNull(file("log.txt"))).toBe("a\nb\n");

    const r = await s.rollback(afterA.id, { scope: "both" });
    expect(readOrNull(file("log.txt"))).toBe("a\n");
    // "b" is left; "a", made after "start"'s files but on both lineages, stays applied: its file stays as it is.
    expect(r.undone.map((t) => (t.args as { line: string }).line)).toEqual(["b"]);
    expect(r.replayed).toEqual([]);
    expect(r.files?.kept).toBeUndefined();
    expect(ops()).toEqual(["run a", "run b", "undo b"]);
  });

  it("the next move finds no drift after tools ran around a restore", async () => {
    fs.writeFileSync(file("log.txt"), "");
    const s = await session();
    const start = await s.checkpoint({ name: "start" });
    await s.invoke("append_line", { path: file("log.txt"), line: "a" });
    await s.checkpoint({ name: "after a" });
    await s.invoke("append_line", { path: file("log.txt"), line: "b" });
    const root = await rootOf(s);
    await s.rollback(start.id, { scope: "both" });
    await s.switchBranch(root.id, { scope: "both" });
    expect(readOrNull(file("log.txt"))).toBe("a\nb\n");
    await s.rollback(start.id, { scope: "both" });
    expect(readOrNull(file("log.txt"))).toBe("");
    expect((await fp.verify()).ok).toBe(true);
  });
});
