// A database whose moves were kept as history rows marked undone (before the move stack) keeps its undo and redo.
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { applyMigrations } from "../../src/store/sqlite/migrate.js";
import { MIGRATIONS } from "../../src/store/sqlite/migrations.generated.js";
import { makeTempDir, removeDir } from "../helpers.js";

const STACK = MIGRATIONS.findIndex((m) => m.sql.some((s) => s.includes("move_top")));

describe("upgrading move history rows to the move stack", () => {
  it("undoes the standing moves newest first and redoes the undone ones oldest first, as before", async () => {
    const dir = makeTempDir("forkpoint-move-stack-");
    const file = path.join(dir, "old.db");
    try {
      const db = new Database(file);
      applyMigrations(db, MIGRATIONS.slice(0, STACK));
      db.exec(`INSERT INTO sessions (id, user_id, current_branch_id, created_at, updated_at) VALUES ('s', 'u', 'b2', 1, 1)`);
      for (const b of ["b0", "b1", "b2", "b3"])
        db.exec(`INSERT INTO branches (id, session_id, parent_id, fork_position, reason, created_at)
          VALUES ('${b}', 's', ${b === "b0" ? "NULL" : "'b0'"}, 0, '${b === "b0" ? "root" : "rollback"}', 1)`);
      // b0 -> b1 -> b2 -> b3, the last one undone (the session is back on b2); another session's rows in between.
      const move =
        db.prepare(`INSERT INTO move_history (session_id, kind, from_branch_id, from_position, to_branch_id, to_position, undone_at, created_at)
        VALUES (?, 'switch', ?, 0, ?, 0, ?, 1)`);
      move.run("s", "b0", "b1", null);
      move.run("other", "x", "y", null);
      move.run("s", "b1", "b2", null);
      move.run("s", "b2", "b3", 5);
      db.close();

      const fp = openForkpoint({ path: file });
      try {
        const s = await fp.getSession("s", { userId: "u" });
        expect((await s.redo()).branch.id).toBe("b3");
        expect((await s.undo()).branch.id).toBe("b2");
        expect((await s.undo()).branch.id).toBe("b1");
        expect((await s.undo()).branch.id).toBe("b0");
        await expect(s.undo()).rejects.toMatchObject({ code: "NOTHING_TO_UNDO" });
        expect((await s.redo()).branch.id).toBe("b1");
        expect((await s.redo()).branch.id).toBe("b2");
        expect((await s.redo()).branch.id).toBe("b3");
        await expect(s.redo()).rejects.toMatchObject({ code: "NOTHING_TO_REDO" });
      } finally {
        await fp.close();
      }
    } finally {
      removeDir(dir);
    }
  });
});
