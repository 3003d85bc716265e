// The newest checkpoint's time of a session (read where every write starts) goes through the session's own index.
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { LAST_CHECKPOINT_AT } from "../../src/store/sqlite/columns.js";
import { tempDatabases } from "../helpers.js";

const db = tempDatabases();

describe("a session's newest checkpoint time on SQLite", () => {
  it("is read through the session's index, not by walking the user's other sessions' checkpoints", async () => {
    const file = db.path();
    const { fp } = db.open({ path: file });
    const sessions = [];
    for (let i = 0; i < 3; i++) sessions.push(await fp.createSession({ userId: "u" }));
    const times: number[] = [];
    for (const s of sessions) times.push((await s.turn([{ role: "user", content: "hi" }], { name: "t" })).checkpoint.createdAt.getTime());
    await fp.close();
    const raw = new Database(file, { readonly: true });
    try {
      const sql = `SELECT ${LAST_CHECKPOINT_AT("?", "?")}`;
      const plan = (raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all("u", sessions[0]!.id) as { detail: string }[]).map((r) => r.detail);
      expect(plan.join("\n")).toContain("checkpoints_session_user_seq");
      // Stored in ms with µs; a checkpoint's Date has the ms.
      expect(Math.floor(raw.prepare(sql).pluck().get("u", sessions[0]!.id) as number)).toBe(times[0]);
      expect(raw.prepare(sql).pluck().get("other", sessions[0]!.id)).toBe(0);
    } finally {
      raw.close();
    }
  });
});
