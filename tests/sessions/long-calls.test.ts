// Long operator calls (verify, exportSession, importSession, prune) take { signal, onProgress }: progress starts at
// { done: 0, total }, never goes back, is reported at a bounded rate and ends at done === total; an abort before or
// during the call rejects with AbortedError (code ABORTED, the signal's reason as cause), writing nothing for import
// and leaving a consistent database for prune.
import { describe, expect, it } from "vitest";
import {
  AbortedError,
  ConflictError,
  NotFoundError,
  ValidationError,
  defineTool,
  type Forkpoint,
  type Progress,
  type SessionHandle,
} from "../../src/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { dumpOf, onPostgres, openForkpoint, sqlOn } from "../fixtures/backend.js";

const dbs = tempDatabases();
const tool = defineTool({ name: "t", run: async (args: { n: number }) => args, undo: async () => {} });

/** A database with one long session (`messages` messages, a branch, state, a tool call, checkpoints) and a short one. */
async function build(messages: number): Promise<{ fp: Forkpoint; path: string; s: SessionHandle }> {
  const { fp, path } = dbs.open({ tools: [tool] });
  const s = await fp.createSession({ userId: "alice", title: "long" });
  for (let i = 0; i < messages; i += 1000) {
    await s.append(Array.from({ length: Math.min(1000, messages - i) }, (_, j) => ({ role: "user", content: `m${i + j}` })));
  }
  await s.setState({ step: 1 });
  const cp = await s.checkpoint({ name: "mid" });
  await s.invoke("t", { n: 1 });
  await s.checkpoint({ name: "expiring", expiresIn: 1 });
  await s.rollback(cp.id);
  await s.append({ role: "user", content: "after" });
  const other = await fp.createSession({ userId: "bob" });
  await other.append({ role: "user", content: "hi" });
  await other.checkpoint();
  return { fp, path, s };
}

/** The one value `sql` reads (on SQLite read at once, when called from a progress callback). */
const count = async (file: string, sql: string): Promise<number> => Number(Object.values((await sqlOn(file, sql))[0]!)[0]);
/** Entries plus checkpoints, of one session or all: the unit verify and exportSession count in. */
const units = (file: string, sessionId?: string) =>
  sessionId === undefined
    ? count(file, "SELECT (SELECT count(*) FROM entries) + (SELECT count(*) FROM checkpoints)")
    : count(
        file,
        `SELECT (SELECT count(*) FROM entries e JOIN branches b ON b.id = e.branch_id WHERE b.session_id = '${sessionId}')
        + (SELECT count(*) FROM checkpoints WHERE session_id = '${sessionId}')`,
      );

/** Records progress, checking as it goes that it starts at 0, never goes back and keeps its total. */
function recorder() {
  const seen: Progress[] = [];
  const onProgress = (p: Progress) => {
    const last = seen[seen.length - 1];
    if (last) {
      expect(p.total).toBe(last.total);
      expect(p.done).toBeGreaterThanOrEqual(last.done);
    } else expect(p.done).toBe(0);
    expect(p.done).toBeLessThanOrEqual(p.total);
    seen.push({ ...p });
  };
  return { seen, onProgress };
}

/** The progress ended at done === total, after about 1% steps at most (not once per row). */
function expectFinished(seen: Progress[], total: number) {
  expect(seen[0]).toEqual({ done: 0, total });
  expect(seen[seen.length - 1]).toEqual({ done: total, total });
  expect(seen.filter((p) => p.done === total)).toHaveLength(1);
  expect(seen.length).toBeLessThanOrEqual(102);
}

/** Aborts the controller once progress passes 0: during the call, deterministically. */
function abortingOnProgress(reason: unknown) {
  const controller = new AbortController();
  const seen: Progress[] = [];
  const onProgress = (p: Progress) => {
    seen.push(p);
    if (p.done > 0) controller.abort(reason);
  };
  return { signal: controller.signal, onProgress, seen };
}

const expectAborted = (e: unknown, reason: unknown) => {
  expect(e).toBeInstanceOf(AbortedError);
  expect((e as AbortedError).code).toBe("ABORTED");
  expect((e as AbortedError).cause).toBe(reason);
};

describe("progress", () => {
  it("verify counts entries and checkpoints, of the whole database or one session", async () => {
    const { fp, path, s } = await build(2500);
    const all = recorder();
    expect(await fp.verify({ onProgress: all.onProgress })).toMatchObject({ ok: true, sessions: 2 });
    expectFinished(all.seen, await units(path));
    expect(all.seen.length).toBeGreaterThan(2); // reported along the way, not only at the ends
    const one = recorder();
    expect(await fp.verify({ sessionId: s.id, onProgress: one.onProgress })).toMatchObject({ ok: true, sessions: 1 });
    expectFinished(one.seen, await units(path, s.id));
  });

  it("exportSession counts the session's entries and checkpoints, and exports the same bytes as without options", async () => {
    const { fp, path, s } = await build(2500);
    const r = recorder();
    const doc = await fp.exportSession(s.id, { userId: "alice", onProgress: r.onProgress, signal: new AbortController().signal });
    expectFinished(r.seen, await units(path, s.id));
    expect(JSON.stringify(doc)).toBe(JSON.stringify(await fp.exportSession(s.id, { userId: "alice" })));
  });

  it("importSession counts the document's entries, states and checkpoints, and reports the end once written", async () => {
    const { fp, s } = await build(2500);
    const doc = await fp.exportSession(s.id, { userId: "alice" });
    const target = dbs.open();
    const r = recorder();
    let storedAtEnd: Promise<number> = Promise.resolve(-1);
    const copy = await target.fp.importSession(doc, {
      userId: "carol",
      onProgress: (p) => {
        r.onProgress(p);
        if (p.done === p.total) storedAtEnd = count(target.path, "SELECT count(*) FROM entries");
      },
    });
    expectFinished(r.seen, doc.entries.length + doc.states.length + doc.checkpoints.length);
    expect(await storedAtEnd).toBe(doc.entries.length);
    expect((await copy.history()).length).toBe((await s.history()).length);
    expect(await target.fp.verify()).toMatchObject({ ok: true });
  });

  it("with nothing to count (an empty session or database), the one report { done: 0, total: 0 } comes at the end", async () => {
    const { fp, path } = dbs.open();
    const empty = await fp.createSession({ userId: "alice" });
    const target = dbs.open();
    const storedAtReport: Promise<number>[] = [];
    const doc = await fp.exportSession(empty.id, { userId: "alice" });
    await target.fp.importSession(doc, {
      userId: "carol",
      onProgress: (p) => {
        expect(p).toEqual({ done: 0, total: 0 });
        storedAtReport.push(count(target.path, "SELECT count(*) FROM sessions"));
      },
    });
    // Reported once, after the write (as for any import), not before it as its start.
    expect(await Promise.all(storedAtReport)).toEqual([1]);
    const seen: Progress[][] = [[], []];
    await fp.exportSession(empty.id, { userId: "alice", onProgress: (p) => seen[0]!.push(p) });
    await dbs.open().fp.verify({ onProgress: (p) => seen[1]!.push(p) });
    expect(seen).toEqual([[{ done: 0, total: 0 }], [{ done: 0, total: 0 }]]);
    expect(await count(path, "SELECT count(*) FROM sessions")).toBe(1);
  });

  it("prune counts its steps (four, and the vacuum)", async () => {
    const { fp } = await build(10);
    await new Promise((r) => setTimeout(r, 5)); // the 1 ms checkpoint has expired
    const r = recorder();
    expect(await fp.prune({ onProgress: r.onProgress })).toMatchObject({ checkpoints: 1, vacuumed: true });
    expect(r.seen.map((p) => p.done)).toEqual([0, 1, 2, 3, 4, 5]);
    const without = recorder();
    await fp.prune({ vacuum: false, onProgress: without.onProgress });
    expectFinished(without.seen, 4);
  });
});

describe("writes during a chunked call", () => {
  it("an export is the session as it was when the call started, whatever another opener writes between its chunks", async () => {
    const { fp, path, s } = await build(5000);
    const cp = await s.checkpoint({ name: "fork here" });
    const before = JSON.stringify(await fp.exportSession(s.id, { userId: "alice" }));
    const other = dbs.track(openForkpoint({ path, tools: [tool] }));
    const same = await other.getSession(s.id, { userId: "alice" });
    const writes: string[] = [];
    let writing: Promise<void> | undefined;
    let reports = 0;
    const doc = await fp.exportSession(s.id, {
      userId: "alice",
      onProgress: (p) => {
        reports++;
        // Started at the first chunk's report: the writes land while the export yields between its chunks.
        writing ??= p.done > 0 ? writeMeanwhile() : undefined;
      },
    });
    async function writeMeanwhile() {
      await same.append([
        { role: "user", content: "late" },
        { role: "assistant", content: "later" },
      ]);
      writes.push("append");
      await same.invoke("t", { n: 2 });
      writes.push("tool");
      const late = await same.checkpoint({ name: "late" });
      writes.push("checkpoint");
      await same.rollback(cp.id);
      writes.push("rollback");
      await same.deleteCheckpoint(late.id);
      await same.setState({ late: true });
      writes.push("state");
    }
    expect(reports).toBeGreaterThan(3);
    // Every write landed before the export's last chunk was read (on PostgreSQL, where a write is several round trips,
    // some of them at least: the rest land after it).
    if (onPostgres) expect(writes.length).toBeGreaterThan(0);
    else expect(writes).toEqual(["append", "tool", "checkpoint", "rollback", "state"]);
    await writing;
    expect(writes).toEqual(["append", "tool", "checkpoint", "rollback", "state"]);
    expect(JSON.stringify(doc)).toBe(before);
    // It imports (every link, hash and checksum agrees), and the session moved on meanwhile.
    const target = dbs.open();
    await target.fp.importSession(doc, { userId: "carol" });
    expect(await target.fp.verify()).toMatchObject({ ok: true });
    expect(JSON.stringify(await fp.exportSession(s.id, { userId: "alice" }))).not.toBe(before);
  });
});

describe("abort", () => {
  it("an already aborted signal rejects every call with ABORTED, the reason as cause, and changes nothing", async () => {
    const { fp, path, s } = await build(10);
    const doc = await fp.exportSession(s.id, { userId: "alice" });
    await fp.deleteSession(s.id, { userId: "alice" });
    const reason = new Error("user pressed ctrl-c");
    const signal = AbortSignal.abort(reason);
    const before = await dumpOf(path);
    const progress: Progress[] = [];
    const onProgress = (p: Progress) => progress.push(p);
    expectAborted(await rejectionOf(fp.verify({ signal, onProgress })), reason);
    expectAborted(
      await rejectionOf(fp.exportSession((await fp.listSessions({ userId: "bob" })).items[0]!.id, { userId: "bob", signal })),
      reason,
    );
    expectAborted(await rejectionOf(fp.importSession(doc, { userId: "alice", signal, onProgress })), reason);
    expectAborted(await rejectionOf(fp.prune({ signal, onProgress })), reason);
    expect(progress).toEqual([]);
    expect(await dumpOf(path)).toEqual(before);
    // Without a reason of its own, the cause is the signal's default AbortError.
    const e = await rejectionOf(fp.verify({ signal: AbortSignal.abort() }));
    expect(e).toBeInstanceOf(AbortedError);
    expect((e.cause as DOMException).name).toBe("AbortError");
  });

  it("an abort during verify or exportSession rejects at the next chunk", async () => {
    const { fp, s } = await build(2500);
    const reason = "stop";
    const v = abortingOnProgress(reason);
    expectAborted(await rejectionOf(fp.verify({ signal: v.signal, onProgress: v.onProgress })), reason);
    expect(v.seen[v.seen.length - 1]!.done).toBeLessThan(v.seen[0]!.total);
    const x = abortingOnProgress(reason);
    expectAborted(await rejectionOf(fp.exportSession(s.id, { userId: "alice", signal: x.signal, onProgress: x.onProgress })), reason);
    expect(x.seen[x.seen.length - 1]!.done).toBeLessThan(x.seen[0]!.total);
  });

  it("an abort during importSession writes nothing; the same import then succeeds", async () => {
    const { fp, s } = await build(2500);
    const doc = await fp.exportSession(s.id, { userId: "alice" });
    const target = dbs.open();
    await target.fp.createSession({ userId: "dave" });
    const before = await dumpOf(target.path);
    const a = abortingOnProgress("changed my mind");
    expectAborted(
      await rejectionOf(target.fp.importSession(doc, { userId: "carol", signal: a.signal, onProgress: a.onProgress })),
      "changed my mind",
    );
    expect(await dumpOf(target.path)).toEqual(before);
    await target.fp.importSession(doc, { userId: "carol" });
    expect(await target.fp.verify()).toMatchObject({ ok: true, sessions: 2 });
  });

  it("an abort during prune keeps the steps already committed, and the database stays consistent", async () => {
    const { fp, path } = await build(10);
    await new Promise((r) => setTimeout(r, 5));
    const moves = await count(path, "SELECT count(*) FROM moves");
    expect(moves).toBeGreaterThan(0);
    const a = abortingOnProgress("enough");
    expectAborted(await rejectionOf(fp.prune({ signal: a.signal, onProgress: a.onProgress })), "enough");
    // The first step (expired checkpoints) committed; the next (move journals) never ran.
    expect(await count(path, "SELECT count(*) FROM checkpoints WHERE name = 'expiring'")).toBe(0);
    expect(await count(path, "SELECT count(*) FROM moves")).toBe(moves);
    expect(await fp.verify()).toMatchObject({ ok: true });
    expect(await fp.prune()).toMatchObject({ checkpoints: 0, moves });
  });

  it("an abort from a timer lands while the call runs: it yields to the event loop between chunks", async () => {
    const { fp, s } = await build(20_000);
    const doc = await fp.exportSession(s.id, { userId: "alice" });
    const target = dbs.open();
    const before = await dumpOf(target.path);
    const calls: [string, (signal: AbortSignal, onProgress: (p: Progress) => void) => Promise<unknown>][] = [
      ["verify", (signal, onProgress) => fp.verify({ signal, onProgress })],
      ["exportSession", (signal, onProgress) => fp.exportSession(s.id, { userId: "alice", signal, onProgress })],
      ["importSession", (signal, onProgress) => target.fp.importSession(doc, { userId: "carol", signal, onProgress })],
    ];
    for (const [name, run] of calls) {
      const controller = new AbortController();
      const seen: Progress[] = [];
      const pending = run(controller.signal, (p) => seen.push(p));
      setTimeout(() => controller.abort("timer"), 0);
      const e = await rejectionOf(pending);
      expect(e, name).toBeInstanceOf(AbortedError);
      expect(seen[seen.length - 1]!.done, name).toBeLessThan(seen[0]!.total);
    }
    expect(await dumpOf(target.path)).toEqual(before);
  });
});

describe("validation", () => {
  it("a signal that is not an AbortSignal, or an onProgress that is not a function, is a ValidationError", async () => {
    const { fp, path, s } = await build(10);
    const doc = await fp.exportSession(s.id, { userId: "alice" });
    const before = await dumpOf(path);
    const cases: [Promise<unknown>, string][] = [
      [fp.verify({ signal: { aborted: true } as never }), "signal"],
      [fp.verify({ onProgress: 1 as never }), "onProgress"],
      [fp.exportSession(s.id, { userId: "alice", signal: "no" as never }), "signal"],
      [fp.importSession(doc, { userId: "carol", onProgress: {} as never }), "onProgress"],
      [fp.prune({ signal: new AbortController() as never }), "signal"],
      [fp.prune({ onProgress: "x" as never }), "onProgress"],
    ];
    for (const [call, field] of cases) {
      const e = await rejectionOf(call);
      expect(e).toBeInstanceOf(ValidationError);
      expect(e.field).toBe(field);
    }
    expect(await dumpOf(path)).toEqual(before);
  });

  it("an unknown session is refused before any progress is reported, as verify refuses it", async () => {
    const { fp, path } = await build(10);
    const before = await dumpOf(path);
    for (const call of [
      (onProgress: (p: Progress) => void) => fp.prune({ sessionId: "ses_unknown", onProgress }),
      (onProgress: (p: Progress) => void) => fp.verify({ sessionId: "ses_unknown", onProgress }),
    ]) {
      const seen: Progress[] = [];
      expect(await rejectionOf(call((p) => seen.push(p)))).toBeInstanceOf(NotFoundError);
      expect(seen).toEqual([]);
    }
    expect(await dumpOf(path)).toEqual(before);
  });

  it("an import of ids that already exist is refused before any progress is reported", async () => {
    const { fp, path, s } = await build(10);
    const doc = await fp.exportSession(s.id, { userId: "alice" });
    const before = await dumpOf(path);
    const seen: Progress[] = [];
    const e = await rejectionOf(fp.importSession(doc, { userId: "carol", onProgress: (p) => seen.push(p) }));
    expect(e).toBeInstanceOf(ConflictError);
    expect(seen).toEqual([]);
    expect(await dumpOf(path)).toEqual(before);
  });
});
