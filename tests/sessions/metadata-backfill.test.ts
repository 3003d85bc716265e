// The metadata index's backfill migration: checkpoints made before checkpoint_metadata existed become filterable,
// their rows exactly those the store writes for a new checkpoint, on both stores.
import { describe, expect, it } from "vitest";
import { MIGRATIONS as PG_MIGRATIONS } from "../../src/store/postgres/migrations.generated.js";
import { MIGRATIONS as SQLITE_MIGRATIONS } from "../../src/store/sqlite/migrations.generated.js";
import { onPostgres, sqlOn } from "../fixtures/backend.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const MIGRATIONS = onPostgres ? PG_MIGRATIONS : SQLITE_MIGRATIONS;
const backfill = MIGRATIONS.find((m) => m.tag.endsWith("_backfill_checkpoint_metadata"))!;

const indexRows = (file: string) =>
  sqlOn<{ cp_user: string; key: string; value: string; cp_seq: number }>(
    file,
    `SELECT cp_user, key, value, cp_seq FROM checkpoint_metadata ORDER BY cp_seq, key, value`,
  );

describe("metadata index backfill", () => {
  it("comes after the migration that creates the index, in the chain every open applies", () => {
    const creates = MIGRATIONS.findIndex((m) => m.sql.some((st) => /CREATE TABLE .checkpoint_metadata./.test(st)));
    expect(creates).toBeGreaterThanOrEqual(0);
    expect(MIGRATIONS.indexOf(backfill)).toBeGreaterThan(creates);
  });

  it("indexes checkpoints recorded without index rows exactly as new checkpoints are indexed", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const v = await fp.createSession({ userId: "v" });
    const tricky = 'é "quoted" \\ back\nline \u0001 😀';
    await s.checkpoint({ name: "planner", metadata: { agent_id: "planner", step: 1, ok: true, note: null } });
    await s.checkpoint({
      name: "numbers",
      metadata: { big: 1e21, small: 1e-7, frac: 0.30000000000000004, neg: -3.5, whole: 1e20, text: tricky },
    });
    await s.checkpoint({ name: "nested", metadata: { agent_id: "planner", nested: { agent_id: "x" }, list: [1], long: "x".repeat(300) } });
    await s.checkpoint({ name: "plain" });
    await v.checkpoint({ name: "other user", metadata: { agent_id: "planner" } });
    await fp.close();

    // What the store wrote; then the checkpoints as ones made before the index: no rows, invisible to the filter.
    const written = await indexRows(path);
    expect(written.length).toBeGreaterThan(10);
    await sqlOn(path, `DELETE FROM checkpoint_metadata`);
    const before = dbs.open({ path });
    expect((await before.fp.listCheckpoints({ userId: "u", metadata: { agent_id: "planner" } })).items).toEqual([]);
    await before.fp.close();

    // The migration's statements, as the migrator runs them: the same rows, and the filters find the old checkpoints.
    for (const statement of backfill.sql) if (statement.trim()) await sqlOn(path, statement);
    expect(await indexRows(path)).toEqual(written);
    const { fp: again } = dbs.open({ path });
    const names = async (metadata: Record<string, unknown>) =>
      (await again.listCheckpoints({ userId: "u", metadata: metadata as never })).items.map((c) => c.name);
    expect(await names({ agent_id: "planner" })).toEqual(["nested", "planner"]);
    expect(await names({ big: 1e21, small: 1e-7, frac: 0.30000000000000004 })).toEqual(["numbers"]);
    expect(await names({ text: tricky })).toEqual(["numbers"]);
    expect(await names({ ok: true, note: null })).toEqual(["planner"]);
  });

  it("run again over an indexed database, adds nothing", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.checkpoint({ metadata: { agent_id: "planner" } });
    await fp.close();
    const written = await indexRows(path);
    for (const statement of backfill.sql) if (statement.trim()) await sqlOn(path, statement);
    expect(await indexRows(path)).toEqual(written);
  });
});
