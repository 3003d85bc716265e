// plan() of a "both" rewind undoing a recorded call: what its undo puts back is its tool's own, kept when no checkpoint
// keeps it (a hand edit made before that call, say), so the plan names that file in `mayKeep`.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull } from "../fixtures/file-tools.js";
import { putBackSession } from "../fixtures/put-back-tools.js";
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
