// timeline pages read only the page: each half (entries per branch, checkpoints, branches, events) is read newest
// first from an index, never the whole session sorted; pages stay what they were (same order, same cursors).
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Forkpoint, SessionHandle, TimelineItem } from "../../src/index.js";
import { rewriteIds } from "../../src/sessions/transfer/rewrite-ids.js";
import { onPostgres, sqlOn } from "../fixtures/backend.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
afterEach(() => vi.restoreAllMocks());

/** Every item of the session's timeline, read in pages of `limit`. */
async function paged(s: SessionHandle, limit: number): Promise<TimelineItem[]> {
  const items: TimelineItem[] = [];
  let cursor: string | null = null;
  do {
    const page = await s.timeline({ limit, cursor });
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

const times = (items: TimelineItem[]) => items.map((i) => i.at.getTime());
const newestFirst = (items: TimelineItem[]) => times(items).every((t, i, all) => i === 0 || all[i - 1]! >= t);

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

  it("pages a session of many branches written in turn: a page reads only the branches that reach it, and misses none", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const t = await s.turn({ role: "user", content: "q" }, { name: "start" });
    const branches: string[] = [];
    for (let i = 0; i < 12; i++) branches.push((await s.rollback(t.checkpoint.id)).branch.id);
    // Round after round, one message on each branch in turn: every page's rows come from many branches.
    for (let round = 0; round < 4; round++)
      for (const [i, b] of branches.entries()) {
        if (round + i > 0) await s.switchBranch(b);
        await s.append({ role: "assistant", content: `r${round}b${i}` });
      }
    const all = (await s.timeline({ limit: 1000 })).items;
    expect(all.filter((i) => i.kind === "message")).toHaveLength(1 + 12 * 4);
    expect(newestFirst(all)).toBe(true);
    for (const limit of [1, 2, 5, 11, 13, 40]) expect(await paged(s, limit)).toEqual(all);
  });

  it("reads each half along its index, newest first, with no sort of the session (query plans)", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    for (let i = 0; i < 30; i++) await s.turn({ role: "user", content: `m${i}` }, { name: `c${i}` });
    const first = await s.timeline({ limit: 5 });
    expect(first.items).toHaveLength(5);
    const key = [Date.now(), "~", Number.MAX_SAFE_INTEGER];
    const below = (source: string, n: number) =>
      `created_at <= $${n} AND (created_at < $${n + 1} OR '${source}' < $${n + 2} OR ('${source}' = $${n + 3} AND seq < $${n + 4}))`;
    if (!onPostgres) {
      const k = [key[0], key[0], "~", "~", key[2]];
      const plans: Record<string, [string, unknown[], RegExp]> = {
        entries: [
          `SELECT id FROM entries INDEXED BY entries_branch_position WHERE branch_id = $1 AND ${below("entry", 2)} ORDER BY position DESC LIMIT 6`,
          ["x", ...k],
          /SEARCH entries USING INDEX entries_branch_position \(branch_id=\?\)/,
        ],
        checkpoints: [
          `SELECT id FROM checkpoints INDEXED BY checkpoints_session_user_seq WHERE user_id = $1 AND session_id = $2
            AND (expires_at IS NULL OR expires_at > $3) AND ${below("checkpoint", 4)} ORDER BY seq DESC LIMIT 6`,
          ["u", "x", key[0], ...k],
          /SEARCH checkpoints USING INDEX checkpoints_session_user_seq \(session_id=\? AND user_id=\?\)/,
        ],
        events: [
          `SELECT ref_id FROM events INDEXED BY events_session_seq WHERE session_id = $1 AND ${below("event", 2)} ORDER BY seq DESC LIMIT 6`,
          ["x", ...k],
          /SEARCH events USING INDEX events_session_seq \(session_id=\?\)/,
        ],
      };
      for (const [table, [text, params, expected]] of Object.entries(plans)) {
        const plan = (await sqlOn<{ detail: string }>(path, `EXPLAIN QUERY PLAN ${text}`, params)).map((r) => r.detail).join("\n");
        // A walk of the index in its order (times never decrease along it), stopped by the page's LIMIT: no temporary sort.
        expect(plan, table).toMatch(expected);
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
            OR 'entry' < $3::text COLLATE "C" OR ('entry' = $3::text AND seq < $4::bigint)) ORDER BY position DESC LIMIT 6`,
          [branchId, key[0], "~", key[2]],
        )
      )
        .map((r) => r["QUERY PLAN"])
        .join("\n");
      expect(plan).toMatch(/Index Scan Backward using entries_branch_position on entries/);
      expect(plan).not.toMatch(/Sort|Seq Scan/);
    }
  });

  it("keeps each stream in the order it was written when a writer's clock is behind (equal times broken by seq)", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.turn({ role: "user", content: "ahead" }, { name: "ahead" });
    const cp = await s.checkpoint({ name: "fork" });
    await s.append({ role: "user", content: "later" });
    // A second opener whose clock reads the process's start: before everything written above.
    vi.spyOn(performance, "now").mockReturnValue(0);
    const t = await dbs.open({ path }).fp.getSession(s.id, { userId: "u" });
    await t.turn(
      [
        { role: "user", content: "b1" },
        { role: "assistant", content: "b2" },
      ],
      { name: "behind" },
    );
    const root = (await t.info()).currentBranchId;
    await t.rollback(cp.id);
    await t.append({ role: "user", content: "b3" });
    await t.switchBranch(root);
    await t.deleteCheckpoint(cp.id).catch(() => undefined);
    vi.restoreAllMocks();
    const all = (await s.timeline({ limit: 1000 })).items;
    expect(newestFirst(all)).toBe(true);
    // The late clock's messages and checkpoint come after what was written before them, newest first.
    const rootMessages = (await s.history({ branchId: root })).map((m) => m.id).reverse();
    expect(all.filter((i) => i.kind === "message" && i.branchId === root).map((i) => i.id)).toEqual(rootMessages);
    expect(all.filter((i) => i.kind === "checkpoint").map((i) => i.summary)).toEqual([
      'checkpoint "behind"',
      'checkpoint "fork"',
      'checkpoint "ahead"',
    ]);
    for (const limit of [1, 2, 3, 5]) expect(await paged(s, limit)).toEqual(all);
  });

  it("sorts by time an imported session whose times go back, and pages it without gaps or repeats", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    for (let i = 0; i < 6; i++) await s.turn({ role: "user", content: `m${i}` }, { name: `c${i}` });
    const cp = await s.checkpoint({ name: "fork" });
    await s.append({ role: "user", content: "x" });
    await s.rollback(cp.id);
    await s.append({ role: "user", content: "y" });
    const doc = await fp.exportSession(s.id, { userId: "u" });
    // Times run backwards along every stream (each branch's entries, the checkpoints), as a foreign document's may.
    const base = 1_700_000_000_000;
    doc.entries.forEach((e, i) => (e.createdAt = base - i * 1000));
    doc.checkpoints.forEach((c, i) => (c.createdAt = base - i * 1500));
    const copy = await fp.importSession(rewriteIds(doc, "ses_backwards", base), { userId: "v" });
    const all = (await copy.timeline({ limit: 1000 })).items;
    expect(all.filter((i) => i.kind !== "branch")).toHaveLength(doc.entries.length + doc.checkpoints.length + doc.events.length);
    expect(newestFirst(all)).toBe(true);
    for (const limit of [1, 4, 7]) expect(await paged(copy, limit)).toEqual(all);
    // An export of the import is the document it came from: no time was changed on the way in.
    const again = await fp.exportSession(copy.id, { userId: "v" });
    expect(again.entries.map((e) => e.createdAt)).toEqual(doc.entries.map((e) => e.createdAt));
  });
});
