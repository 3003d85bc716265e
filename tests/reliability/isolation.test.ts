// Isolation (DESIGN §6.3): every read is scoped to one user. Property tests over random multi-user data:
//  - no listing (listSessions, listCheckpoints with random filters, a session's branches / history / tool track /
//    timeline) ever returns another user's rows, and each listing returns exactly the user's own matching rows;
//  - every SessionHandle method (and getSession / listCheckpoints) given ids of another user's session, checkpoint,
//    branch or message fails exactly like an unknown id: NotFoundError, same code, same kind, same message shape,
//    and the database is left exactly as it was.
//
// FORKPOINT_SEED=<int>, FORKPOINT_PROPERTY_RUNS=<int> (this file runs a tenth of it, at least 40 data sets; by default
// 100, and 20 on PostgreSQL).
import * as path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotFoundError, defineTool, type Forkpoint, type SessionHandle } from "../../src/index.js";
import { makeTempDir, removeDir, withIdMasked } from "../helpers.js";
import { dumpOf, onPostgres, openForkpoint } from "../fixtures/backend.js";

const SEED = Number.parseInt(process.env.FORKPOINT_SEED ?? "20250607", 10);
// On PostgreSQL (a database made per data set) half as many by default.
const RUNS = process.env.FORKPOINT_PROPERTY_RUNS
  ? Math.max(40, Math.ceil(Number.parseInt(process.env.FORKPOINT_PROPERTY_RUNS, 10) / 10))
  : onPostgres
    ? 20
    : 100;
const USERS = ["alice", "bob", "carol", "dave"];

const noteTool = defineTool({ name: "note", run: (args: { n: number }) => args.n, undo: () => undefined });

// ---------------------------------------------------------------------------------------------------------------
// Random multi-user data: every user starts with one session holding a message and a checkpoint, then random ops.

type Op =
  | { op: "session"; user: number }
  | { op: "append"; user: number; s: number; n: number }
  | { op: "checkpoint"; user: number; s: number; name: "a" | "b" | null }
  | { op: "rollback"; user: number; s: number; cp: number }
  | { op: "edit"; user: number; s: number; msg: number }
  | { op: "state"; user: number; s: number; v: number }
  | { op: "invoke"; user: number; s: number; n: number };

const describeOp = (o: Op) =>
  `${o.op}(${Object.entries(o)
    .filter(([k]) => k !== "op")
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(" ")})`;
const printable = <T extends object>(o: T, text: (o: T) => string): T =>
  Object.defineProperty(o, fc.toStringMethod, { value: () => text(o), enumerable: false });

const u = fc.nat({ max: USERS.length - 1 });
const i = fc.nat({ max: 20 });
const opArb: fc.Arbitrary<Op> = fc
  .oneof(
    fc.record({ op: fc.constant("session" as const), user: u }),
    fc.record({ op: fc.constant("append" as const), user: u, s: i, n: fc.integer({ min: 1, max: 3 }) }),
    fc.record({ op: fc.constant("checkpoint" as const), user: u, s: i, name: fc.constantFrom("a" as const, "b" as const, null) }),
    fc.record({ op: fc.constant("rollback" as const), user: u, s: i, cp: i }),
    fc.record({ op: fc.constant("edit" as const), user: u, s: i, msg: i }),
    fc.record({ op: fc.constant("state" as const), user: u, s: i, v: fc.nat({ max: 9 }) }),
    fc.record({ op: fc.constant("invoke" as const), user: u, s: i, n: fc.nat({ max: 9 }) }),
  )
  .map((o) => printable(o, describeOp));

/** A checkpoint listing filter (the user is added by the test); `session` picks own/foreign/unknown/none. */
interface Filter {
  session: "none" | "own" | "foreign" | "unknown";
  sessionPick: number;
  name: "a" | "b" | "zzz" | null;
  auto: boolean | null;
  /** Indexes into the sorted checkpoint times (or null): since / until windows. */
  since: number | null;
  until: number | null;
  limit: number;
}
const filterArb: fc.Arbitrary<Filter> = fc
  .record({
    session: fc.constantFrom("none" as const, "own" as const, "foreign" as const, "unknown" as const),
    sessionPick: i,
    name: fc.constantFrom("a" as const, "b" as const, "zzz" as const, null, null),
    auto: fc.constantFrom(true, false, null, null),
    since: fc.option(fc.nat({ max: 40 }), { nil: null }),
    until: fc.option(fc.nat({ max: 40 }), { nil: null }),
    limit: fc.integer({ min: 1, max: 7 }),
  })
  .map((f) => printable(f, (x) => `filter(${JSON.stringify(x)})`));

interface KnownSession {
  handle: SessionHandle;
  user: string;
  branches: string[];
  checkpoints: { id: string; name: string | null; createdAt: number; seq: number }[];
  messages: string[];
  tools: string[];
}

async function build(fp: Forkpoint, ops: Op[]): Promise<{ sessions: KnownSession[]; bySeq: Map<string, number> }> {
  const sessions: KnownSession[] = [];
  let seq = 0;
  const addSession = async (user: string) => {
    const handle = await fp.createSession({ userId: user, title: `${user}'s` });
    const s: KnownSession = { handle, user, branches: [(await handle.info()).currentBranchId], checkpoints: [], messages: [], tools: [] };
    sessions.push(s);
    return s;
  };
  const checkpoint = async (s: KnownSession, name: string | null) => {
    const cp = await s.handle.checkpoint(name === null ? {} : { name });
    s.checkpoints.push({ id: cp.id, name: cp.name, createdAt: cp.createdAt.getTime(), seq: seq++ });
  };
  for (const user of USERS) {
    const s = await addSession(user);
    s.messages.push(...(await s.handle.append({ role: "user", content: `hello from ${user}` })).map((m) => m.id));
    await checkpoint(s, "a");
  }
  for (const o of ops) {
    const user = USERS[o.user]!;
    if (o.op === "session") {
      await addSession(user);
      continue;
    }
    const own = sessions.filter((s) => s.user === user);
    const s = own[o.s % own.length]!;
    switch (o.op) {
      case "append":
        s.messages.push(
          ...(await s.handle.append(Array.from({ length: o.n }, (_, k) => ({ role: k % 2 ? "assistant" : "user", content: `m${k}` })))).map(
            (m) => m.id,
          ),
        );
        break;
      case "checkpoint":
        await checkpoint(s, o.name);
        break;
      case "rollback": {
        const cp = s.checkpoints[o.cp % s.checkpoints.length];
        if (!cp) break;
        // A rollback to where the session already is keeps its branch: only a new one is listed again.
        const { branch } = await s.handle.rollback(cp.id);
        if (!s.branches.includes(branch.id)) s.branches.push(branch.id);
        break;
      }
      case "edit": {
        const msg = s.messages[o.msg % s.messages.length];
        if (msg === undefined) break;
        const r = await s.handle.edit(msg, { role: "user", content: "edited" });
        s.branches.push(r.branch.id);
        s.messages.push(r.message.id);
        break;
      }
      case "state":
        await s.handle.setState({ v: o.v, user });
        break;
      case "invoke":
        await s.handle.invoke("note", { n: o.n });
        s.tools.push((await s.handle.toolTrack()).at(-1)!.id);
        break;
    }
  }
  const bySeq = new Map<string, number>();
  for (const s of sessions) for (const c of s.checkpoints) bySeq.set(c.id, c.seq);
  return { sessions, bySeq };
}

/** A syntactically similar id that certainly does not exist (same prefix, same length). */
const unknownLike = (id: string) => {
  const cut = id.indexOf("_") + 1;
  return id.slice(0, cut) + "Z".repeat(Math.max(8, id.length - cut));
};

async function rejection(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection, but the call resolved");
}

/** Both calls must fail with a NotFoundError of the same code and kind, and messages equal once the ids are masked. */
async function expectSameAsUnknown(label: string, foreignId: string, call: (id: string) => Promise<unknown>): Promise<void> {
  const unknown = unknownLike(foreignId);
  const a = await rejection(call(foreignId));
  const b = await rejection(call(unknown));
  expect(b, `${label}: unknown id`).toBeInstanceOf(NotFoundError);
  expect(a, `${label}: another user's id must look unknown`).toBeInstanceOf(NotFoundError);
  expect({ name: a.name, code: a.code, kind: a.kind, message: withIdMasked(a.message, foreignId) }, label).toEqual({
    name: b.name,
    code: b.code,
    kind: b.kind,
    message: withIdMasked(b.message, unknown),
  });
  expect(a.id, `${label}: the error names the id asked for`).toBe(foreignId);
}

async function allPages<T>(fetch: (cursor: string | null) => Promise<{ items: T[]; nextCursor: string | null }>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  for (let guard = 0; guard < 10_000; guard++) {
    const page = await fetch(cursor);
    out.push(...page.items);
    cursor = page.nextCursor;
    if (cursor === null) return out;
  }
  throw new Error("listing never ended");
}

describe("isolation between users", () => {
  let dir: string;
  let run = 0;
  beforeAll(() => {
    dir = makeTempDir("forkpoint-isolation-");
  });
  afterAll(() => {
    if (dir) removeDir(dir);
  });

  /** A fresh database file per data set (so listings can be checked for exactness). */
  async function withDatabase(fn: (fp: Forkpoint, file: string) => Promise<void>): Promise<void> {
    const file = path.join(dir, `iso-${run++}.db`);
    const fp = openForkpoint({ path: file, tools: [noteTool] });
    try {
      await fp.ready;
      await fn(fp, file);
    } finally {
      await fp.close();
      removeDir(file);
      for (const ext of ["-wal", "-shm"]) removeDir(file + ext);
    }
  }

  it(`no listing returns another user's rows; each returns exactly the user's own (${RUNS} data sets, seed ${SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { maxLength: 30, size: "max" }),
        fc.array(filterArb, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 5 }),
        async (ops, filters, pageSize) => {
          await withDatabase(async (fp) => {
            const { sessions, bySeq } = await build(fp, ops);
            const sessionsOf = (user: string) => sessions.filter((s) => s.user === user);
            const idsOf = (ss: KnownSession[]) =>
              new Set(ss.flatMap((s) => [s.handle.id, ...s.branches, ...s.messages, ...s.tools, ...s.checkpoints.map((c) => c.id)]));
            const times = [...new Set(sessions.flatMap((s) => s.checkpoints.map((c) => c.createdAt)))].sort((a, b) => a - b);

            for (const user of USERS) {
              const own = sessionsOf(user);
              const foreign = sessions.filter((s) => s.user !== user);
              const foreignIds = idsOf(foreign);

              // listSessions: exactly the user's sessions, newest first, across pages
              const listed = await allPages((cursor) => fp.listSessions({ userId: user, limit: pageSize, cursor }));
              expect(
                listed.every((x) => x.userId === user),
                "listSessions leaks another user's session",
              ).toBe(true);
              expect(listed.map((x) => x.id)).toEqual(own.map((s) => s.handle.id).reverse());

              // listCheckpoints with random filters: only the user's rows, and exactly those matching
              for (const f of filters) {
                let sessionId: string | undefined;
                if (f.session === "own") sessionId = own[f.sessionPick % own.length]!.handle.id;
                if (f.session === "foreign") sessionId = foreign[f.sessionPick % foreign.length]!.handle.id;
                if (f.session === "unknown") sessionId = unknownLike(own[0]!.handle.id);
                const since = f.since === null || times.length === 0 ? undefined : times[f.since % times.length]!;
                const until = f.until === null || times.length === 0 ? undefined : times[f.until % times.length]!;
                const input = {
                  userId: user,
                  ...(sessionId ? { sessionId } : {}),
                  ...(f.name ? { name: f.name } : {}),
                  ...(f.auto === null ? {} : { auto: f.auto }),
                  ...(since === undefined ? {} : { since: new Date(since) }),
                  ...(until === undefined ? {} : { until: new Date(until) }),
                };
                const got = await allPages((cursor) => fp.listCheckpoints({ ...input, limit: f.limit, cursor }));
                expect(
                  got.filter((c) => c.userId !== user || foreignIds.has(c.id) || foreignIds.has(c.sessionId)),
                  `listCheckpoints(${JSON.stringify(input)}) leaks`,
                ).toEqual([]);
                const expected = own
                  .filter((s) => sessionId === undefined || s.handle.id === sessionId)
                  .flatMap((s) => s.checkpoints.map((c) => ({ ...c, sessionId: s.handle.id })))
                  .filter((c) => (f.name ? c.name === f.name : true) && f.auto !== true)
                  .filter((c) => (since === undefined || c.createdAt >= since) && (until === undefined || c.createdAt <= until))
                  .sort((a, b) => b.seq - a.seq)
                  .map((c) => c.id);
                expect(
                  got.map((c) => c.id),
                  `listCheckpoints(${JSON.stringify(input)})`,
                ).toEqual(expected);
                expect(got.every((c) => bySeq.has(c.id))).toBe(true);
              }

              // per-session views: branches, history and tool track of every branch, timeline
              for (const s of own) {
                const handle = await fp.getSession(s.handle.id, { userId: user });
                const ownIds = idsOf([s]);
                const branches = await handle.branches();
                expect(
                  branches.map((b) => b.id),
                  "branches",
                ).toEqual(s.branches);
                expect(branches.every((b) => b.sessionId === s.handle.id)).toBe(true);
                for (const b of branches) {
                  const history = await handle.history({ branchId: b.id });
                  expect(
                    history.filter((m) => !ownIds.has(m.id) || !ownIds.has(m.branchId)),
                    "history leaks",
                  ).toEqual([]);
                  const track = await handle.toolTrack({ branchId: b.id });
                  expect(
                    track.filter((t) => !ownIds.has(t.id) || !ownIds.has(t.branchId)),
                    "tool track leaks",
                  ).toEqual([]);
                }
                const timeline = await allPages((cursor) => handle.timeline({ limit: pageSize, cursor }));
                expect(
                  timeline.filter((t) => !ownIds.has(t.branchId) || foreignIds.has(t.id)),
                  "timeline leaks",
                ).toEqual([]);
                expect(
                  timeline.filter((t) => t.kind !== "state" && !ownIds.has(t.id)),
                  "timeline items name this session's rows",
                ).toEqual([]);
                expect(timeline.filter((t) => t.kind === "message").length).toBe(s.messages.length);
                expect(timeline.filter((t) => t.kind === "checkpoint").length).toBe(s.checkpoints.length);
                expect((await handle.listCheckpoints({ limit: 1000 })).items.map((c) => c.id)).toEqual(
                  s.checkpoints.map((c) => c.id).reverse(),
                );
              }
            }
          });
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  }, 600_000);

  it(`every call given another user's ids fails exactly like an unknown id, changing nothing (${RUNS} data sets, seed ${SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { maxLength: 20 }),
        fc.nat({ max: USERS.length - 1 }),
        fc.nat({ max: USERS.length - 2 }),
        fc.nat(),
        async (ops, me, otherPick, pick) => {
          await withDatabase(async (fp, file) => {
            const { sessions } = await build(fp, ops);
            const user = USERS[me]!;
            const other = USERS.filter((x) => x !== user)[otherPick]!;
            // my session (one with a checkpoint, for diff); any of the other user's sessions, checkpoints, messages, branches
            const mine = sessions.filter((x) => x.user === user && x.checkpoints.length > 0);
            const theirs = sessions.filter((x) => x.user === other);
            const s = mine[pick % mine.length]!;
            const t = theirs[pick % theirs.length]!;
            const from = <T>(list: T[]) => list[pick % list.length]!;
            const cpT = from(theirs.flatMap((x) => x.checkpoints)).id;
            const msgT = from(theirs.flatMap((x) => x.messages));
            const brT = from(theirs.flatMap((x) => x.branches));
            const ownCp = s.checkpoints[0]!.id;
            const h = s.handle;
            const before = await dumpOf(file);

            await expectSameAsUnknown("getSession", t.handle.id, (id) => fp.getSession(id, { userId: user }));
            await expectSameAsUnknown("history({ branchId })", brT, (id) => h.history({ branchId: id }));
            await expectSameAsUnknown("toolTrack({ branchId })", brT, (id) => h.toolTrack({ branchId: id }));
            await expectSameAsUnknown("restore", cpT, (id) => h.restore(id));
            await expectSameAsUnknown("deleteCheckpoint", cpT, (id) => h.deleteCheckpoint(id));
            await expectSameAsUnknown("plan({ checkpointId })", cpT, (id) => h.plan({ checkpointId: id }));
            await expectSameAsUnknown("plan({ branchId })", brT, (id) => h.plan({ branchId: id }));
            await expectSameAsUnknown("plan({ messageId })", msgT, (id) => h.plan({ messageId: id }));
            await expectSameAsUnknown("rollback", cpT, (id) => h.rollback(id));
            await expectSameAsUnknown("edit", msgT, (id) => h.edit(id, { role: "user", content: "hijack" }));
            await expectSameAsUnknown("versions", msgT, (id) => h.versions(id));
            await expectSameAsUnknown("switchBranch", brT, (id) => h.switchBranch(id));
            await expectSameAsUnknown("diff(foreign, own)", cpT, (id) => h.diff(id, ownCp));
            await expectSameAsUnknown("diff(own, foreign)", cpT, (id) => h.diff(ownCp, id));

            // the session-level listing of a foreign session answers like an unknown one (empty, not an error)
            const foreignList = await fp.listCheckpoints({ userId: user, sessionId: t.handle.id });
            const unknownList = await fp.listCheckpoints({ userId: user, sessionId: unknownLike(t.handle.id) });
            expect(foreignList).toEqual(unknownList);
            expect(foreignList.items).toEqual([]);

            // nothing was written by any of the refused calls
            expect(await dumpOf(file)).toEqual(before);
          });
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  }, 600_000);
});
