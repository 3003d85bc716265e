// listCheckpoints({ metadata }): equality on top-level metadata keys, read through the checkpoint_metadata index
// (not a scan of the user's checkpoints), combined with the other filters and cursors, the same on both stores.
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../src/index.js";
import { onPostgres, sqlOn } from "../fixtures/backend.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

async function all(fp: import("../../src/index.js").Forkpoint, input: Parameters<typeof fp.listCheckpoints>[0]) {
  const names: (string | null)[] = [];
  let cursor: string | null = null;
  do {
    const page = await fp.listCheckpoints({ ...input, limit: 2, cursor });
    names.push(...page.items.map((c) => c.name));
    cursor = page.nextCursor;
  } while (cursor);
  return names;
}

describe("metadata filter", () => {
  it("matches equal top-level values (several keys: all of them), with the other filters and cursors", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const t = await fp.createSession({ userId: "u" });
    const v = await fp.createSession({ userId: "v" });
    await s.checkpoint({ name: "p1", metadata: { agent_id: "planner", step: 1, ok: true } });
    await s.checkpoint({ name: "w1", metadata: { agent_id: "writer", step: 1, ok: false } });
    await t.checkpoint({ name: "p2", metadata: { agent_id: "planner", step: 2, ok: true, note: null } });
    await s.checkpoint({ name: "p3", metadata: { agent_id: "planner", step: "1", nested: { agent_id: "x" } } });
    await s.checkpoint({ name: "none" });
    await v.checkpoint({ name: "pv", metadata: { agent_id: "planner" } });
    const gone = await s.checkpoint({ name: "p4", metadata: { agent_id: "planner" } });
    await s.expire(gone.id);

    expect(await all(fp, { userId: "u", metadata: { agent_id: "planner" } })).toEqual(["p3", "p2", "p1"]);
    expect(await all(fp, { userId: "u", metadata: { agent_id: "planner", step: 1 } })).toEqual(["p1"]);
    expect(await all(fp, { userId: "u", metadata: { step: "1" } })).toEqual(["p3"]);
    expect(await all(fp, { userId: "u", metadata: { ok: false } })).toEqual(["w1"]);
    expect(await all(fp, { userId: "u", metadata: { note: null } })).toEqual(["p2"]);
    expect(await all(fp, { userId: "u", metadata: { nested: null } })).toEqual([]);
    expect(await all(fp, { userId: "u", sessionId: s.id, metadata: { agent_id: "planner" } })).toEqual(["p3", "p1"]);
    expect(await all(fp, { userId: "u", name: "p2", metadata: { agent_id: "planner" } })).toEqual(["p2"]);
    expect(await all(fp, { userId: "v", metadata: { agent_id: "planner" } })).toEqual(["pv"]);
    expect(await all(fp, { userId: "u", metadata: {} })).toEqual(["none", "p3", "p2", "w1", "p1"]);
    expect((await s.listCheckpoints({ metadata: { agent_id: "writer" } })).items.map((c) => c.name)).toEqual(["w1"]);
  });

  it("index rows go with their checkpoints (delete, prune, deleteSession) and come with an import", async () => {
    const { fp, path } = dbs.open();
    const count = async () => Number((await sqlOn<{ n: number }>(path, `SELECT count(*) AS n FROM checkpoint_metadata`))[0]!.n);
    const s = await fp.createSession({ userId: "u" });
    const a = await s.checkpoint({ name: "a", metadata: { agent_id: "planner", n: 1 } });
    const b = await s.checkpoint({ name: "b", metadata: { agent_id: "planner" } });
    expect(await count()).toBe(3);
    await s.deleteCheckpoint(a.id);
    expect(await count()).toBe(1);
    await s.expire(b.id);
    await fp.prune({ vacuum: false });
    expect(await count()).toBe(0);
    await s.checkpoint({ name: "c", metadata: { agent_id: "planner" } });
    const doc = await fp.exportSession(s.id, { userId: "u" });
    await fp.deleteSession(s.id, { userId: "u" });
    expect(await count()).toBe(0);
    await fp.importSession(doc, { userId: "u" });
    expect((await fp.listCheckpoints({ userId: "u", metadata: { agent_id: "planner" } })).items.map((c) => c.name)).toEqual(["c"]);
  });

  it("matches a __proto__ key exactly, as JSON.parse of a request gives it", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.checkpoint({ name: "proto-x", metadata: JSON.parse('{"__proto__": "x", "a": 1}') });
    await s.checkpoint({ name: "proto-null", metadata: JSON.parse('{"__proto__": null}') });
    await s.checkpoint({ name: "plain", metadata: { a: 1 } });
    await s.checkpoint({ name: "none" });
    expect(await all(fp, { userId: "u", metadata: JSON.parse('{"__proto__": "x"}') })).toEqual(["proto-x"]);
    expect(await all(fp, { userId: "u", metadata: JSON.parse('{"__proto__": null}') })).toEqual(["proto-null"]);
    expect(await all(fp, { userId: "u", metadata: JSON.parse('{"__proto__": "x", "a": 1}') })).toEqual(["proto-x"]);
    expect(await all(fp, { userId: "u", metadata: JSON.parse('{"__proto__": "y"}') })).toEqual([]);
    // Its value is checked as any other's.
    const error = await fp.listCheckpoints({ userId: "u", metadata: JSON.parse('{"__proto__": {"b": 1}}') }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toContain("metadata.__proto__");
  });

  it("refuses a filter whose keys are inherited (a prototype of its own), which would match every checkpoint", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.checkpoint({ name: "x", metadata: { agent: "x" } });
    await s.checkpoint({ name: "y", metadata: { agent: "y" } });
    const nullProto = Object.assign(Object.create(null) as Record<string, string>, { agent: "x" });
    expect(await all(fp, { userId: "u", metadata: nullProto })).toEqual(["x"]);
    for (const metadata of [Object.create({ agent: "x" }) as Record<string, string>, Object.create(nullProto) as Record<string, string>]) {
      const error = await fp.listCheckpoints({ userId: "u", metadata }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect(error).toMatchObject({ code: "VALIDATION_ERROR", field: "metadata" });
    }
  });

  it("refuses values that are not scalars, and overlong ones", async () => {
    const { fp } = dbs.open();
    for (const metadata of [{ a: { b: 1 } }, { a: [1] }, { a: Number.NaN }, { a: undefined }, { a: "x".repeat(300) }, "a"]) {
      await expect(fp.listCheckpoints({ userId: "u", metadata } as never)).rejects.toBeInstanceOf(ValidationError);
    }
  });

  it("reads the metadata index, not the user's checkpoints (query plan)", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    for (let i = 0; i < 20; i++) await s.checkpoint({ name: `c${i}`, metadata: { agent_id: i % 2 ? "planner" : "writer" } });
    // The statement the store runs for { userId, metadata: { agent_id } } (see src/store/*/checkpoints.ts).
    if (!onPostgres) {
      const plan = await sqlOn<{ detail: string }>(
        path,
        `EXPLAIN QUERY PLAN SELECT checkpoints.id FROM checkpoint_metadata m0 CROSS JOIN checkpoints ON checkpoints.seq = m0.cp_seq
        WHERE user_id = $1 AND seq < $2 AND (expires_at IS NULL OR expires_at > $3) AND m0.cp_user = $4 AND m0.key = $5 AND m0.value = $6
          AND m0.cp_seq < $7 ORDER BY m0.cp_seq DESC LIMIT 51`,
        ["u", Number.MAX_SAFE_INTEGER, 0, "u", "agent_id", '"planner"', Number.MAX_SAFE_INTEGER],
      );
      const text = plan.map((r) => r.detail).join("\n");
      expect(text).toMatch(
        /SEARCH m0 USING (COVERING )?INDEX sqlite_autoindex_checkpoint_metadata_1 \(cp_user=\? AND key=\? AND value=\? AND cp_seq<\?\)/,
      );
      expect(text).toMatch(/SEARCH checkpoints USING INTEGER PRIMARY KEY/);
      expect(text).not.toMatch(/SCAN|TEMP B-TREE/);
    } else {
      // Enough rows of other keys that the planner's costs reflect a real table, then statistics.
      await sqlOn(path, `INSERT INTO checkpoint_metadata SELECT 'u', 'k' || g, 'v', g FROM generate_series(1, 20000) g`);
      await sqlOn(path, `ANALYZE checkpoint_metadata`);
      await sqlOn(path, `ANALYZE checkpoints`);
      const plan = await sqlOn<{ "QUERY PLAN": string }>(
        path,
        `EXPLAIN SELECT checkpoints.id FROM checkpoint_metadata m0 JOIN checkpoints ON checkpoints.seq = m0.cp_seq
        WHERE user_id = $1 AND seq < $2::bigint AND (expires_at IS NULL OR expires_at > $3::float8) AND m0.cp_user = $1
          AND m0.cp_seq < $2::bigint AND m0.key = $4 AND m0.value = $5 ORDER BY m0.cp_seq DESC LIMIT 51`,
        ["u", Number.MAX_SAFE_INTEGER, 0, "agent_id", '"planner"'],
      );
      const text = plan.map((r) => r["QUERY PLAN"]).join("\n");
      expect(text).toMatch(
        /Index (Only )?Scan( Backward)? using checkpoint_metadata_cp_user_key_value_cp_seq_pk on checkpoint_metadata m0/,
      );
      expect(text).not.toMatch(/Seq Scan on checkpoint_metadata/);
    }
    expect((await fp.listCheckpoints({ userId: "u", metadata: { agent_id: "planner" } })).items).toHaveLength(10);
  });
});
