// A database written by an earlier forkpoint (schema of migration 0000, as shipped) opens, migrates and keeps
// everything: histories, branches, checkpoints, the state, the tool track and the integrity chain.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { defineTool, openForkpoint } from "../../src/index.js";
import { openDatabase } from "../../src/store/sqlite/open.js";
import { makeTempDir, removeDir, withRawDatabase } from "../helpers.js";

// Written through the public API at commit af5aaca (schema 0000); tests/fixtures/databases/README.md lists its content.
const FIXTURE = fileURLToPath(new URL("../fixtures/databases/schema-0000.db", import.meta.url));

const note = defineTool<{ text: string }, { n: number }>({ name: "note", run: async (a) => ({ n: a.text.length }), undo: async () => {} });

function copyFixture(): { file: string; dir: string } {
  const dir = makeTempDir("forkpoint-upgrade-");
  const file = path.join(dir, "old.db");
  fs.copyFileSync(FIXTURE, file);
  return { file, dir };
}

function appliedMigrations(file: string): number {
  return withRawDatabase(file, (db) => (db.prepare("SELECT count(*) AS n FROM __drizzle_migrations").get() as { n: number }).n);
}

describe("upgrading a database written by forkpoint's first schema", () => {
  it("migrates on open and keeps every session, branch, checkpoint and tool call intact", async () => {
    const { file, dir } = copyFixture();
    try {
      expect(appliedMigrations(file)).toBe(1);
      const fp = openForkpoint({ path: file, tools: [note] });
      try {
        expect(await fp.verify()).toEqual({ ok: true, sessions: 2, problems: [] });
        const [alice] = (await fp.listSessions({ userId: "alice" })).items;
        expect(alice?.title).toBe("trip");
        const s = await fp.getSession(alice!.id, { userId: "alice" });
        expect((await s.history()).map((m) => m.content)).toEqual(["plan a trip", "where to?", "Faro instead", "Faro it is"]);
        expect(await s.getState()).toEqual({ city: "Lisbon" });
        expect((await s.branches()).length).toBe(3);
        const names = (await s.listCheckpoints()).items.map((c) => c.name);
        expect(names).toEqual(["after tool", "start"]);
        const afterTool = (await s.listCheckpoints()).items.find((c) => c.name === "after tool")!;
        const restored = await s.restore(afterTool.id);
        expect(restored.history.map((m) => m.content)).toEqual(["plan a trip", "where to?", "Porto instead"]);
        expect(restored.toolTrack.map((t) => [t.tool, t.status, t.applied])).toEqual([["note", "succeeded", false]]);

        // New writes go on from the old rows: ids, positions and the hash chain continue.
        await s.append({ role: "user", content: "after the upgrade" });
        const cp = await s.checkpoint({ name: "new" });
        expect((await s.restore(cp.id)).history.at(-1)?.content).toBe("after the upgrade");
        const moved = await s.rollback(afterTool.id);
        expect(moved.replayed.map((t) => t.tool)).toEqual(["note"]);
        expect(await fp.verify()).toEqual({ ok: true, sessions: 2, problems: [] });
        // Its sessions predate ordered times: the timeline sorts them by time, and pages it the same way.
        const timeline = (await s.timeline({ limit: 1000 })).items;
        expect(timeline.map((i) => i.at.getTime())).toEqual(timeline.map((i) => i.at.getTime()).sort((x, y) => y - x));
        const paged: typeof timeline = [];
        let cursor: string | null = null;
        do {
          const page: Awaited<ReturnType<typeof s.timeline>> = await s.timeline({ limit: 2, cursor });
          paged.push(...page.items);
          cursor = page.nextCursor;
        } while (cursor);
        expect(paged).toEqual(timeline);
        const bob = (await fp.listCheckpoints({ userId: "bob" })).items.map((c) => c.name);
        expect(bob).toEqual(["bob-1"]);
      } finally {
        await fp.close();
      }
      expect(appliedMigrations(file)).toBeGreaterThan(1);
      withRawDatabase(file, (db) => {
        expect(db.pragma("foreign_key_check")).toEqual([]);
      });
    } finally {
      removeDir(dir);
    }
  });

  it("opened read-only, is SCHEMA_TOO_OLD and left as it was; opened writable once, it reads read-only", async () => {
    const { file, dir } = copyFixture();
    try {
      const bytes = fs.readFileSync(file);
      expect(() => openForkpoint({ path: file, readonly: true })).toThrow(
        expect.objectContaining({ name: "DatabaseError", code: "SCHEMA_TOO_OLD" }),
      );
      expect(fs.readFileSync(file).equals(bytes)).toBe(true);
      const writer = openForkpoint({ path: file, tools: [note] });
      await writer.listSessions({ userId: "alice" });
      await writer.close();
      const reader = openForkpoint({ path: file, readonly: true });
      expect((await reader.listSessions({ userId: "alice" })).items.map((x) => x.title)).toEqual(["trip"]);
      await reader.close();
    } finally {
      removeDir(dir);
    }
  });

  it("leaves foreign keys enforced on the connection that migrated, and migrates only once", async () => {
    const { file, dir } = copyFixture();
    try {
      const db = openDatabase({ path: file, durability: "normal", busyTimeoutMs: 1000, readonly: false });
      try {
        expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
        expect(() =>
          db
            .prepare(
              "INSERT INTO entries (id, branch_id, position, kind, msg_count, hash, created_at) VALUES ('x', 'no-such-branch', 1, 'message', 1, x'00', 0)",
            )
            .run(),
        ).toThrow(/FOREIGN KEY/);
      } finally {
        db.close();
      }
      const after = appliedMigrations(file);
      await openForkpoint({ path: file }).close();
      expect(appliedMigrations(file)).toBe(after);
    } finally {
      removeDir(dir);
    }
  });
});
