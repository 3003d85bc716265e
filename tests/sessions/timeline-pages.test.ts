// timeline pages read only the page: each half (entries per branch, checkpoints, branches, events) is read newest
// first from an index, never the whole session sorted; pages stay what they were (same order, same cursors).
import { describe, expect, it } from "vitest";
import type { TimelineItem } from "../../src/index.js";
import { onPostgres, sqlOn } from "../fixtures/backend.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

describe("timeline pages", () => {
  it("page through a session with branches, checkpoints and events in one order, without gaps or repeats", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "a" });
    const cp = await s.checkpoint({ name: "one" });
    for (let i = 0; i < 12; i++) await s.append({ role: i % 2 ? "assistant" : "user", content: `m${i}` });
    await s.rollback(cp.id);
    for (let i = 0; i < 7; i++) await s.append({ role: "user", content: `b${i}` });
    await s.checkpoint({ name: "two" });
    const all: TimelineItem[] = (await s.timeline({ limit: 1000 })).items;
    const paged: TimelineItem[] = [];
    let cursor: string | null = null;
    do {
      const page = await s.timeline({ limit: 3, cursor });
      paged.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    expect(paged).toEqual(all);
    expect(all.length).toBe(1 + 12 + 7 + 2 + 1); // entries, checkpoints, the rollback's branch
    for (let i = 1; i < all.length; i++) expect(all[i - 1]!.at.getTime()).toBeGreaterThanOrEqual(all[i]!.at.getTime());
  });

  it("reads each half from its index, newest first, with no sort of the session (query plans)", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    for (let i = 0; i < 30; i++) await s.turn({ role: "user", content: `m${i}` }, { name: `c${i}` });
    const first = await s.timeline({ limit: 5 });
    expect(first.items).toHaveLength(5);
    const key = [Date.now(), "~", Number.MAX_SAFE_INTEGER];
    const below = (source: string) => `created_at <= $2 AND (created_at < $3 OR '${source}' < $4 OR ('${source}' = $5 AND seq < $6))`;
    if (!onPostgres) {
      const plans: Record<string, string> = {
        entries: `SELECT id FROM entries INDEXED BY entries_branch_created WHERE branch_id = $1 AND ${below("entry")} ORDER BY created_at DESC, seq DESC LIMIT 6`,
        checkpoints: `SELECT id FROM checkpoints INDEXED BY checkpoints_session_created WHERE session_id = $1 AND ${below("checkpoint")} ORDER BY created_at DESC, seq DESC LIMIT 6`,
        events: `SELECT ref_id FROM events INDEXED BY events_session_created WHERE session_id = $1 AND ${below("event")} ORDER BY created_at DESC, seq DESC LIMIT 6`,
      };
      for (const [table, text] of Object.entries(plans)) {
        const plan = (await sqlOn<{ detail: string }>(path, `EXPLAIN QUERY PLAN ${text}`, ["x", key[0], key[0], "~", "~", key[2]]))
          .map((r) => r.detail)
          .join("\n");
        // A range search of the index from the page's key, in its order: no scan, no temporary sort.
        expect(plan, table).toMatch(new RegExp(`SEARCH ${table} USING INDEX \\w+_created \\(\\w+=\\? AND created_at<\\?\\)`));
        expect(plan, table).not.toMatch(/TEMP B-TREE|SCAN/);
      }
    } else {
      // A table of realistic size, so that the planner's costs are those of a long session, then statistics.
      const branchId = (await s.info()).currentBranchId;
      await sqlOn(
        path,
        `INSERT INTO entries (id, branch_id, position, kind, msg_count, hash, created_at)
        SELECT 'filler' || g, $1, 1000 + g, 'state', 0, '\\x00', g FROM generate_series(1, 20000) g`,
        [branchId],
      );
      await sqlOn(path, `ANALYZE entries`);
      const plan = (
        await sqlOn<{ "QUERY PLAN": string }>(
          path,
          `EXPLAIN SELECT id FROM entries WHERE branch_id = $1 AND created_at <= $2::float8 AND (created_at < $2::float8
            OR 'entry' < $3::text COLLATE "C" OR ('entry' = $3::text AND seq < $4::bigint)) ORDER BY created_at DESC, seq DESC LIMIT 6`,
          [branchId, key[0], "~", key[2]],
        )
      )
        .map((r) => r["QUERY PLAN"])
        .join("\n");
      expect(plan).toMatch(/Index Scan Backward using entries_branch_created on entries/);
      expect(plan).not.toMatch(/Sort|Seq Scan/);
    }
  });
});
