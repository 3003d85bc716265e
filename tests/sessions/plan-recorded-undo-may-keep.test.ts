// plan() of a "both" rewind undoing a recorded call: what its undo puts back is its tool's own, kept when no checkpoint
// keeps it (a hand edit made before that call, say), so the plan names that file in `mayKeep`.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull, tempDir } from "../fixtures/file-tools.js";
import { defineTool } from "../../src/index.js";
import { put, putBackSession } from "../fixtures/put-back-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

for (const previous of ["by hand", "a"])
  it(`a rewind over a recorded write that put back ${JSON.stringify(previous)}: the plan says the file may be kept`, async () => {
    const { ws, s, c0 } = await putBackSession(dbs, "forkpoint-plan-may-keep-");
    const a = path.join(ws, "a.txt");
    fs.writeFileSync(a, "by hand");
    fs.writeFileSync(a, "recorded"); // ran elsewhere, recorded over the hand edit (or, told so, over "a")
    await s.recordToolCall({ tool: "write", args: { path: a, text: "recorded" }, result: { previous } });

    const planned = await s.plan({ checkpointId: c0.id, scope: "both" });
    expect(planned.files).toEqual({ written: ["a.txt"], deleted: [], mayKeep: ["a.txt"] });
    const moved = await s.rollback(c0.id, { scope: "both", force: true });
    // Kept as the undo put it back when no checkpoint keeps that; else restored as the target has it.
    if (previous === "by hand") {
      expect(moved.files?.kept).toEqual(["a.txt"]);
      expect(readOrNull(a)).toBe("by hand");
    } else {
      expect(moved.files?.kept).toBeUndefined();
      expect(readOrNull(a)).toBe("a");
    }
  });

/** gen: a command run in `cwd` (recorded only), writing files there; undo puts back what each held. */
const gen = defineTool<{ cwd: string; cmd: string }, { before: Record<string, string | null> }>({
  name: "gen",
  run: () => {
    throw new Error("recorded only");
  },
  undo: ({ args, result }) => {
    for (const [rel, text] of Object.entries(result.before)) put(path.join(args.cwd, rel), text);
  },
});

for (const cwd of ["the workspace", "a folder in it"])
  it(`a recorded command run in ${cwd}: the plan's mayKeep names the files it wrote, never a folder`, async () => {
    const ws = tempDir("forkpoint-plan-may-keep-folder-");
    fs.mkdirSync(path.join(ws, "sub"));
    const { fp } = dbs.open({ tools: [gen] as never[] });
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    await s.append({ role: "user", content: "start" });
    const c0 = await s.checkpoint({ name: "c0" });
    const dir = cwd === "the workspace" ? ws : path.join(ws, "sub");
    fs.writeFileSync(path.join(dir, "out.txt"), "generated"); // ran elsewhere, recorded
    await s.recordToolCall({ tool: "gen", args: { cwd: dir, cmd: "make" }, result: { before: { "out.txt": null } } });

    const planned = await s.plan({ checkpointId: c0.id, scope: "both" });
    const out = cwd === "the workspace" ? "out.txt" : "sub/out.txt";
    expect(planned.files?.mayKeep).toEqual([out]);
  });
