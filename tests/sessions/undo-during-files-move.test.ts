// undo/redo while another handle's move with files runs (an MCP client's rollback still rewinding): the move is not
// done, so the answer is MOVE_IN_PROGRESS, never "nothing to undo" (a moment later there is one).
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { makeTempDir, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

describe("undo and redo while a move with files runs elsewhere", () => {
  for (const scope of ["both", "conversation"] as const) {
    it(`answer MOVE_IN_PROGRESS, then undo takes the move back (${scope})`, async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let undoing!: () => void;
      const started = new Promise<void>((resolve) => (undoing = resolve));
      const slow = defineTool({
        name: "slow",
        run: async () => "done",
        undo: async () => {
          undoing();
          await held;
        },
      });
      const { fp, path: file } = dbs.open({ tools: [slow] });
      const other = dbs.open({ path: file, tools: [slow] }).fp;
      const s = await fp.createSession({ userId: "alice" });
      const dir = makeTempDir();
      fs.writeFileSync(path.join(dir, "a.txt"), "one");
      await s.attachWorkspace(dir);
      const start = await s.checkpoint({ name: "start" });
      await s.invoke("slow", {});
      const moving = s.rollback(start.id, { scope });
      await started;

      const there = await other.getSession(s.id, { userId: "alice" });
      try {
        await expect(there.undo({ scope })).rejects.toMatchObject({ code: "MOVE_IN_PROGRESS" });
        await expect(there.redo({ scope })).rejects.toMatchObject({ code: "MOVE_IN_PROGRESS" });
      } finally {
        release();
      }
      const moved = await moving;
      expect((await there.undo({ scope })).branch.id).not.toBe(moved.branch.id);
    });
  }
});
