// Chat reading: one message by id, history pages before a position, and each message's `< i/n >` versions in one call.
import { describe, expect, it } from "vitest";
import { NotFoundError, ValidationError, type Message } from "../../src/index.js";
import { versionedPage } from "../../src/sessions/history.js";
import { MESSAGE_VERSIONS as POSTGRES_MESSAGE_VERSIONS } from "../../src/store/postgres/entries.js";
import { MESSAGE_VERSIONS as SQLITE_MESSAGE_VERSIONS } from "../../src/store/sqlite/entries.js";
import { dumpOf, onPostgres, sqlOn } from "../fixtures/backend.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

async function chat(n: number) {
  const { fp, path } = dbs.open();
  const s = await fp.createSession({ userId: "alice" });
  const msgs = await s.append(Array.from({ length: n }, (_, i) => ({ role: i % 2 === 0 ? "user" : "assistant", content: `m${i + 1}` })));
  return { fp, path, s, msgs };
}

describe("message(id)", () => {
  it("reads a message of any branch of the session", async () => {
    const { s, msgs } = await chat(3);
    const { message } = await s.edit(msgs[1]!.id, { content: "m2'" });
    expect(await s.message(msgs[2]!.id)).toEqual(msgs[2]);
    expect(await s.message(message.id)).toEqual(message);
  });

  it("is NotFoundError for unknown ids, other sessions' and other users' messages", async () => {
    const { fp, s } = await chat(1);
    const other = await fp.createSession({ userId: "alice" });
    const [theirs] = await other.append({ role: "user", content: "x" });
    const bob = await fp.createSession({ userId: "bob" });
    const [bobs] = await bob.append({ role: "user", content: "y" });
    for (const id of ["msg_nope", theirs!.id, bobs!.id]) {
      const e = await s.message(id).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(NotFoundError);
      expect(e).toMatchObject({ kind: "message", id });
    }
  });
});

describe("history pages", () => {
  it("returns the last `limit` messages, and `before: page[0].position` pages back to the start", async () => {
    const { s } = await chat(7);
    await s.setState({ x: 1 }); // a non-message entry between messages
    await s.append({ role: "user", content: "m8" });
    const all = await s.history();
    const seen: string[][] = [];
    let page = await s.history({ limit: 3 });
    while (page.length > 0) {
      seen.unshift(page.map((m) => m.content as string));
      page = await s.history({ limit: 3, before: page[0]!.position });
    }
    expect(seen).toEqual([
      ["m1", "m2"],
      ["m3", "m4", "m5"],
      ["m6", "m7", "m8"],
    ]);
    expect(seen.flat()).toEqual(all.map((m) => m.content));
  });

  it("pages with `branchId: page[0].branchId` stay on the branch the first page read when another tab moves", async () => {
    const { fp, s, msgs } = await chat(4);
    const { message } = await s.edit(msgs[3]!.id, { content: "m4'" });
    await s.append([
      { role: "user", content: "m5'" },
      { role: "assistant", content: "m6'" },
    ]);
    const shown = (await s.history()).map((m) => m.content);
    const tab = await fp.getSession(s.id, { userId: "alice" });

    // The recipe of docs/chat-apps.md, with the other tab's edit of an older message between the first two pages.
    let page = await s.history({ limit: 2 });
    await tab.edit(msgs[1]!.id, { content: "m2''" });
    // What `before` alone would read: the new branch's messages before the position, another conversation.
    const mixed = await s.history({ limit: 2, before: page[0]!.position });
    expect(mixed.map((m) => m.content)).toEqual(["m1", "m2''"]);
    const seen: string[][] = [];
    while (page.length > 0) {
      seen.unshift(page.map((m) => m.content as string));
      page = await s.history({ limit: 2, before: page[0]!.position, branchId: page[0]!.branchId });
    }
    // The second page starts on the edit's branch (m4'), the third on its parent: page[0].branchId is the one it was written on.
    expect(seen).toEqual([
      ["m1", "m2"],
      ["m3", "m4'"],
      ["m5'", "m6'"],
    ]);
    expect(seen.flat()).toEqual(shown);
    expect(message.branchId).not.toBe(msgs[0]!.branchId);
  });

  it("reads across the ancestry of a forked branch, and of `branchId`", async () => {
    const { s, msgs } = await chat(4);
    const root = (await s.info()).currentBranchId;
    const { message } = await s.edit(msgs[2]!.id, { content: "m3'" });
    await s.append({ role: "assistant", content: "m4'" });
    expect((await s.history({ limit: 3 })).map((m) => m.content)).toEqual(["m2", "m3'", "m4'"]);
    expect((await s.history({ limit: 2, before: message.position })).map((m) => m.content)).toEqual(["m1", "m2"]);
    expect((await s.history({ branchId: root, limit: 2 })).map((m) => m.content)).toEqual(["m3", "m4"]);
    expect(await s.history({ before: 1 })).toEqual([]);
  });

  it("with versions: every message carries { index, count, branchIds } equal to versions(id)", async () => {
    const { s, msgs } = await chat(4);
    const root = (await s.info()).currentBranchId;
    const a = await s.edit(msgs[0]!.id, { content: "m1'" }); // the first message: forked at position 0
    await s.append({ role: "assistant", content: "m2 of m1'" });
    const b = await s.edit(msgs[2]!.id, { content: "m3'" });
    const c = await s.regenerate(msgs[3]!.id, { content: "m4 again" });
    await s.switchBranch(b.branch.id);
    await s.append({ role: "assistant", content: "m4 of m3'" });

    for (const branchId of [root, a.branch.id, b.branch.id, c.branch.id]) {
      const page = await s.history({ branchId, withVersions: true });
      expect(page.length).toBeGreaterThan(0);
      for (const m of page) {
        const v = await s.versions(m.id);
        expect(m.versions).toEqual({ index: v.index, count: v.count, branchIds: v.versions.map((x) => x.branchId) });
      }
    }
    const page = await s.history({ branchId: root, withVersions: true, limit: 2 });
    expect(page.map((m) => [m.content, m.versions.index, m.versions.count])).toEqual([
      ["m3", 0, 2],
      ["m4", 0, 2],
    ]);
    const first = await s.history({ branchId: root, withVersions: true, limit: 1, before: 2 });
    expect(first[0]!.versions).toEqual({ index: 0, count: 2, branchIds: [root, a.branch.id] });
  });

  it("refuses a bad limit or before with a ValidationError naming it, and writes nothing", async () => {
    const { s, path } = await chat(2);
    const before = await dumpOf(path);
    const cases: [unknown, string][] = [
      [{ limit: 0 }, "limit"],
      [{ limit: 1.5 }, "limit"],
      [{ limit: 100_000 }, "limit"],
      [{ limit: "5" }, "limit"],
      [{ before: 0 }, "before"],
      [{ before: -3 }, "before"],
      [{ withVersions: "yes" }, "withVersions"],
      [{ page: 2 }, "options"],
    ];
    for (const [options, field] of cases) {
      const e = await s.history(options as never).catch((x: unknown) => x);
      expect(e, JSON.stringify(options)).toBeInstanceOf(ValidationError);
      expect(e).toMatchObject({ field });
    }
    expect(await dumpOf(path)).toEqual(before);
  });
});

// What a page with versions costs follows what it returns (each message's versions), never their square nor the
// session's other branches: counted in reads of the versions' ids, and in the query's plan.
describe("history({ withVersions }) cost", () => {
  it("groups n versions in work linear in n (reads of their ids counted)", () => {
    const n = 2_000;
    let reads = 0;
    const rows = Array.from({ length: n }, (_, i) => ({
      ofId: "msg_a",
      branchId: `br_${i}`,
      get id() {
        reads++;
        return `msg_${i === 0 ? "a" : i}`;
      },
    }));
    const message = { id: "msg_a", branchId: "br_0" } as Message;
    const [page] = versionedPage([message], rows);
    expect(page!.versions).toMatchObject({ index: 0, count: n });
    expect(page!.versions.branchIds).toHaveLength(n);
    expect(reads).toBeLessThanOrEqual(4 * n);
  });

  it("reads every version by index, and only branches that are versions (query plan)", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const [q, a] = await s.append([
      { role: "user", content: "q" },
      { role: "assistant", content: "a" },
    ]);
    // Branches forked elsewhere (after the answer) beside versions of the first message and of the answer.
    const cp = await s.checkpoint();
    for (let i = 0; i < 3; i++) await s.rollback(cp.id);
    await s.edit(q!.id, { content: "q2" });
    await s.regenerate(a!.id, { content: "a2" });
    const ids = [q!.id, a!.id];
    // Each message's versions follow the message before it (the first one's, none).
    const anchors = [null, q!.id];
    expect((await s.history({ branchId: q!.branchId, withVersions: true })).map((m) => m.versions.count)).toEqual([2, 2]);
    if (onPostgres) {
      // Tables of realistic size, so that the planner's costs are those of a busy database: 2,000 other sessions, each
      // with a branch holding messages at the same positions, then statistics.
      await sqlOn(
        path,
        `INSERT INTO sessions (id, user_id, current_branch_id, created_at, updated_at)
        SELECT 'ses_filler' || g, 'filler', 'br_filler' || g, g, g FROM generate_series(1, 2000) g`,
      );
      await sqlOn(
        path,
        `INSERT INTO branches (id, session_id, parent_id, fork_position, reason, created_at)
        SELECT 'br_filler' || g, 'ses_filler' || g, NULL, 0, 'root', g FROM generate_series(1, 2000) g`,
      );
      await sqlOn(
        path,
        `INSERT INTO entries (id, branch_id, position, kind, role, content, msg_count, hash, created_at)
        SELECT 'msg_filler' || g || '_' || p, 'br_filler' || g, p, 'message', 'user', '"x"', p, 'h', g
        FROM generate_series(1, 2000) g, generate_series(1, 3) p`,
      );
      await sqlOn(path, `ANALYZE entries; ANALYZE branches`);
    }
    const plan = onPostgres
      ? (
          await sqlOn<{ "QUERY PLAN": string }>(
            path,
            `EXPLAIN ${POSTGRES_MESSAGE_VERSIONS.replace("$1::text[]", `ARRAY['${ids.join("','")}']`)
              .replace("$3::text[]", `ARRAY[${anchors.map((x) => (x === null ? "NULL" : `'${x}'`)).join(",")}]::text[]`)
              .replaceAll("$2", `'${s.id}'`)}`,
          )
        )
          .map((r) => r["QUERY PLAN"])
          .join("\n")
      : (
          await sqlOn<{ detail: string }>(path, `EXPLAIN QUERY PLAN ${SQLITE_MESSAGE_VERSIONS}`, [
            { anchors: JSON.stringify(ids.map((id, i) => [id, anchors[i]])), session: s.id },
          ])
        )
          .map((r) => r.detail)
          .join("\n");
    if (onPostgres) {
      expect(plan).not.toMatch(/Seq Scan on (entries|branches)/);
      // The session's branches are found by their fork entry too (none: a fork at 0), never by the session alone.
      const conds = [...plan.matchAll(/Index (?:Only )?Scan using branches_session_fork_entry[^\n]*\n\s*Index Cond: ([^\n]*)/g)].map(
        (m) => m[1],
      );
      expect(conds.length).toBeGreaterThan(0);
      for (const cond of conds) expect(cond).toMatch(/fork_entry_id/);
    } else {
      // Scanning `s`, the recursive query's own rows (one per branch it reached), is no table scan.
      expect(plan.replaceAll(/\bSCAN s\n/g, "")).not.toMatch(/\bSCAN (entries|branches|[a-z]\b)/);
      expect(plan).not.toMatch(/branches_session_fork_entry \(session_id=\?\)/);
    }
  });
});
