// The same port calls on a SqliteStore and a PostgresStore give the same results: times, booleans, hashes, order, counts.
// Beyond the spec (store-spec.ts), which checks each call's contract, it holds the two drivers to equal answers where
// the contract leaves room: tie-breaks, id collation, what a call returns past the cases the spec names.
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Body, BranchRow, NewCheckpoint, NewEntry, Owner, Store, TimelineKey, Tx } from "../../../src/store/port/index.js";
import { PostgresStore } from "../../../src/store/postgres/store.js";
import { SqliteStore } from "../../../src/store/sqlite/store.js";
import { freshPgDatabase, pgServer } from "../../fixtures/postgres-database.js";

const server = await pgServer();

/** Times with µs fractions, as the engine makes them. */
const T0 = 1732640000123.456;
const at = (n: number) => T0 + n * 1000.001;
const hex = (label: string) => createHash("sha256").update(label).digest("hex");

type Log = [label: string, value: unknown][];

/** Runs every method of the port on `store`, logging each result under a label. */
async function scenario(store: Store): Promise<Log> {
  const log: Log = [];
  const note = (label: string, value: unknown) => (log.push([label, value]), value);
  const w = async <T>(label: string, sessionId: string, body: Body<T>) => note(label, await store.write({ sessionId }, body)) as T;
  const g = async <T>(label: string, body: Body<T>) => note(label, await store.write({ global: true }, body)) as T;
  const r = async <T>(label: string, body: Body<T>) => note(label, await store.read(body)) as T;
  const q = async <T>(label: string, body: Body<T>) => note(label, await store.query(body)) as T;

  // Sessions of four users whose ids sort differently by bytes and by an English collation.
  const users = ["alice", "Bob", "~zed", "émile", "alice"];
  for (const [i, userId] of users.entries()) {
    const id = `s${i + 1}`;
    await w(`insertSession ${id}`, id, function* (tx) {
      yield* tx.insertSession({
        id,
        userId,
        title: i === 0 ? "First" : null,
        metadata: i === 0 ? '{"b":1,"a":[1,2]}' : null,
        currentBranchId: `${id}-b1`,
        originSessionId: i === 4 ? "s1" : null,
        originCheckpointId: null,
        createdAt: at(i),
        updatedAt: at(i),
      });
      yield* tx.insertBranch({
        id: `${id}-b1`,
        sessionId: id,
        parentId: null,
        forkCheckpointId: null,
        forkPosition: 0,
        forkEntryId: null,
        name: null,
        reason: "root",
        createdAt: at(i),
      });
    });
  }

  // s1's root branch: messages, a state change, two tool calls.
  const entry = (branchId: string, position: number, over: Partial<NewEntry> = {}): NewEntry => ({
    id: `${branchId}-e${position}`,
    branchId,
    position,
    kind: "message",
    role: position % 2 ? "user" : "assistant",
    content: JSON.stringify({ text: `m${position}`, ü: "é" }),
    tool: null,
    callId: null,
    clientId: null,
    metadata: null,
    stateId: null,
    msgCount: position,
    hash: hex(`${branchId}/${position}`),
    createdAt: at(10 + position) + 0.001,
    ...over,
  });
  const stateA = await w("putSnapshot a", "s1", (tx) => tx.putSnapshot(hex("state a"), '{"a":1}'));
  await w("putSnapshot a again", "s1", (tx) => tx.putSnapshot(hex("state a"), '{"a":1}'));
  const stateB = await w("putSnapshot b", "s1", (tx) => tx.putSnapshot(hex("state b"), '{"b":2}'));
  await w("entries b1", "s1", function* (tx) {
    yield* tx.insertEntry(entry("s1-b1", 1, { clientId: "c1", metadata: '{"k":"v"}' }));
    yield* tx.insertEntry(entry("s1-b1", 2));
    yield* tx.insertEntry(entry("s1-b1", 3, { kind: "state", role: null, content: null, stateId: stateA, msgCount: 2 }));
    yield* tx.insertEntry(
      entry("s1-b1", 4, {
        kind: "tool",
        role: null,
        tool: "write",
        callId: "call-1",
        content: '{"p":1}',
        stateId: stateA,
        msgCount: 2,
        reversible: true,
      }),
    );
    yield* tx.insertEntry(
      entry("s1-b1", 5, {
        kind: "tool",
        role: null,
        tool: "read",
        callId: "call-2",
        content: "{}",
        stateId: stateA,
        msgCount: 2,
        reversible: false,
      }),
    );
    yield* tx.insertEntry(entry("s1-b1", 6, { kind: "tool", role: null, tool: "legacy", content: "{}", stateId: stateA, msgCount: 2 }));
    yield* tx.insertEntry(entry("s1-b1", 7, { stateId: stateB, msgCount: 3 }));
    yield* tx.markHasTools("s1");
    yield* tx.markHasTools("s1");
    yield* tx.insertToolResult({
      entryId: "s1-b1-e4",
      status: "succeeded",
      result: '{"ok":true}',
      error: null,
      hash: hex("r4"),
      completedAt: at(30),
    });
    yield* tx.insertToolResult({
      entryId: "s1-b1-e5",
      status: "failed",
      result: null,
      error: "boom",
      hash: hex("r5"),
      completedAt: at(31),
    });
  });

  // Checkpoints: named, auto, expiring, and one whose user does not own the session (an orphan).
  const checkpoint = (id: string, branchId: string, position: number, over: Partial<NewCheckpoint> = {}): NewCheckpoint => ({
    id,
    sessionId: "s1",
    branchId,
    position,
    name: null,
    auto: false,
    metadata: null,
    userId: "alice",
    stateId: null,
    headHash: hex(`head ${id}`),
    checksum: hex(`sum ${id}`),
    createdAt: at(40 + Number(id.replace(/\D/g, ""))),
    expiresAt: null,
    ...over,
  });
  await w("checkpoints", "s1", function* (tx) {
    yield* tx.insertCheckpoint(checkpoint("cp1", "s1-b1", 2, { name: "first", metadata: '{"langgraph":{"source":"input"}}' }), at(41));
    yield* tx.insertCheckpoint(checkpoint("cp2", "s1-b1", 7, { auto: true, expiresAt: at(100), stateId: stateB }), at(42));
    yield* tx.insertCheckpoint(checkpoint("cp3", "s1-b1", 5, { name: "first", metadata: '{"langgraph":{"source":"loop"}}' }), at(43));
    yield* tx.insertCheckpoint(checkpoint("cp4", "s1-b1", 6, { auto: true, expiresAt: at(50) }), at(44));
    yield* tx.insertCheckpoint(checkpoint("cp5", "s1-b1", 6, { expiresAt: at(50), createdAt: at(45) }), at(45));
    yield* tx.insertCheckpoint(checkpoint("cp6", "s1-b1", 3, { userId: "mallory" }), at(46));
  });

  // Branches: one forked from cp1 (at entry 2), one at position 0; s1 switches to the first.
  await w("branches", "s1", function* (tx) {
    const fork: BranchRow = {
      id: "s1-b2",
      sessionId: "s1",
      parentId: "s1-b1",
      forkCheckpointId: "cp1",
      forkPosition: 2,
      forkEntryId: "s1-b1-e2",
      name: "edit",
      reason: "rollback",
      createdAt: at(50),
    };
    yield* tx.insertBranch(fork);
    yield* tx.insertBranch({
      ...fork,
      id: "s1-b3",
      forkCheckpointId: null,
      forkPosition: 0,
      forkEntryId: null,
      name: null,
      reason: "edit",
    });
    yield* tx.insertBranch({ ...fork, id: "s1-b4", parentId: "s1-b2", forkCheckpointId: null, forkPosition: 3, forkEntryId: "s1-b2-e3" });
    yield* tx.insertEntry(entry("s1-b2", 3, { createdAt: at(51) }));
    yield* tx.insertEntry(entry("s1-b2", 4, { createdAt: at(51) }));
    yield* tx.insertEntry(entry("s1-b4", 4, { createdAt: at(52) }));
    yield* tx.setCurrentBranch("s1", "s1-b4", at(53));
    // Events at the same times as entries: the timeline's tie-breaks decide their order.
    yield* tx.insertEvent({ sessionId: "s1", kind: "switch", refId: "s1-b4", branchId: "s1-b4", detail: null, createdAt: at(51) });
    yield* tx.insertEvent({ sessionId: "s1", kind: "branch", refId: "s1-b2", branchId: "s1-b2", detail: '{"why":"x"}', createdAt: at(50) });
    yield* tx.insertEvent({
      sessionId: "s1",
      kind: "checkpoint_deleted",
      refId: "cpX",
      branchId: "s1-b1",
      detail: null,
      createdAt: at(51),
    });
    yield* tx.insertImportedCall("s1-b1-e6", "s1");
    yield* tx.putCallPaths("s1-b1-e6", "s1", ["z.txt", "A/é.txt", "a.txt"]);
    yield* tx.putCallPaths("s1-b1-e5", "s1", []);
  });
  await w("session s2 entries", "s2", function* (tx) {
    yield* tx.insertEntry(entry("s2-b1", 1, { createdAt: at(60) }));
    yield* tx.insertEntry(entry("s2-b1", 2, { createdAt: at(1) }));
  });

  // Sessions and listings.
  for (const id of ["s1", "s2", "s9"]) {
    await q(`getSession ${id}`, (tx) => tx.getSession(id));
    await q(`getSessionInfo ${id}`, (tx) => tx.getSessionInfo(id));
  }
  await q("listSessions alice", (tx) => tx.listSessions("alice", undefined, 10));
  await q("listSessions alice page", (tx) => tx.listSessions("alice", 5, 1));
  await q("allSessionIds", (tx) => tx.allSessionIds());
  await q("listAllSessions", (tx) => tx.listAllSessions(undefined, 3));
  await q("listAllSessions page", (tx) => tx.listAllSessions(3, 10));
  await q("countUserSessions alice", (tx) => tx.countUserSessions("alice"));
  await q("countUserSessions nobody", (tx) => tx.countUserSessions("nobody"));
  await q("userSessionIds alice", (tx) => tx.userSessionIds("alice", undefined, 10));
  await q("userSessionIds alice page", (tx) => tx.userSessionIds("alice", 5, 1));
  await q("listUsers", (tx) => tx.listUsers(undefined, 10));
  await q("listUsers page", (tx) => tx.listUsers("Bob", 2));
  await q("listUsers after ~", (tx) => tx.listUsers("~", 10));
  await q("sessionEvents", (tx) => tx.sessionEvents("s1"));
  await q("importedCalls", (tx) => tx.importedCalls("s1"));
  await q("callPaths", (tx) => tx.callPaths("s1-b1-e6"));
  await q("callPaths none", (tx) => tx.callPaths("s1-b1-e1"));
  await q("pathChangingCalls", (tx) => tx.pathChangingCalls("s1"));
  await q("pathlessCalls", (tx) => tx.pathlessCalls("s1"));
  const none = { sessions: ["s8"], branches: ["s8-b1"], entries: ["s8-b1-e1"], checkpoints: ["cp-none"] };
  await q("takenId none", (tx) => tx.takenId(none));
  await q("takenId session", (tx) => tx.takenId({ ...none, sessions: ["s8", "s2"], entries: ["s1-b1-e6"] }));
  await q("takenId entry", (tx) => tx.takenId({ ...none, entries: ["s8-b1-e1", "s1-b1-e6"] }));

  // Timeline, page by page.
  let before: TimelineKey | undefined;
  for (let page = 0; page < 10; page++) {
    const rows = await r(`timeline page ${page}`, (tx) => tx.timeline("alice", "s1", before, 4, at(49)));
    if (rows.length < 4) break;
    before = rows[rows.length - 1];
  }
  await r("timeline after expiries", (tx) => tx.timeline("alice", "s1", undefined, 100, at(60)));
  await r("timeline of another user", (tx) => tx.timeline("Bob", "s1", undefined, 100, at(49)));
  await w("markTimesUnordered s2", "s2", (tx) => tx.markTimesUnordered("s2"));
  await r("timeline of times that go back", function* (tx) {
    const page = yield* tx.timeline("Bob", "s2", undefined, 1, at(49));
    return [page, yield* tx.timeline("Bob", "s2", page[0], 10, at(49))];
  });

  // Branches and entries.
  await r("branches", function* (tx) {
    return {
      getBranch: yield* tx.getBranch("s1-b2"),
      missing: yield* tx.getBranch("nope"),
      list: yield* tx.listBranches("s1"),
      atZero: yield* tx.branchesForkedAt("s1", null),
      atEntry: yield* tx.branchesForkedAt("s1", "s1-b1-e2"),
      forkedFromCp1: yield* tx.countBranchesForkedFrom("cp1"),
      forkedFromCp3: yield* tx.countBranchesForkedFrom("cp3"),
      count: yield* tx.countBranches("s1"),
      heads: yield* tx.branchHeads("s1"),
    };
  });
  await r("entries", function* (tx) {
    return {
      getEntry: yield* tx.getEntry("s1-b1-e4"),
      missing: yield* tx.getEntry("nope"),
      withBaseFirstOwn: yield* tx.entryWithBase("s1-b2-e3"),
      withBaseSecond: yield* tx.entryWithBase("s1-b2-e4"),
      withBaseRoot: yield* tx.entryWithBase("s1-b1-e5"),
      lastOwn: yield* tx.lastOwnEntry("s1-b1"),
      lastOwnEmpty: yield* tx.lastOwnEntry("s1-b3"),
      current: yield* tx.currentOf("s1"),
      currentEmpty: yield* tx.currentOf("s3"),
      currentMissing: yield* tx.currentOf("nope"),
      ownAt: yield* tx.ownEntryAt("s1-b1", 3),
      ownAtMissing: yield* tx.ownEntryAt("s1-b1", 99),
    };
  });
  for (const [branchId, upTo] of [
    ["s1-b4", undefined],
    ["s1-b4", 3],
    ["s1-b1", undefined],
    ["s1-b1", 4],
    ["s1-b3", undefined],
  ] as const) {
    await r(`lineage ${branchId} ${upTo}`, function* (tx) {
      const segments = yield* tx.lineage(branchId, upTo);
      const out: { segments: unknown; entries: unknown[]; messages: unknown[]; last: unknown[]; tools: unknown[]; unapplied: unknown[] } = {
        segments,
        entries: [],
        messages: [],
        last: [],
        tools: [],
        unapplied: [],
      };
      const mapped: string[] = [];
      for (const segment of segments) {
        out.entries.push(yield* tx.segmentEntries(segment));
        yield* tx.segmentMessages(segment, (m) => ({ ...m }), out.messages);
        yield* tx.segmentMessages(segment, (m) => `${m.branchId}@${m.position}:${m.createdAt}`, mapped);
        out.last.push(yield* tx.lastSegmentMessage(segment));
        out.tools.push(yield* tx.segmentTools(segment));
        out.unapplied.push(yield* tx.unappliedTools(segment));
      }
      return { ...out, mapped };
    });
  }
  await r("tools", function* (tx) {
    return {
      done: yield* tx.getTool("s1-b1-e4"),
      legacy: yield* tx.getTool("s1-b1-e6"),
      notATool: yield* tx.getTool("s1-b1-e1"),
      running: yield* tx.runningTools(),
      snapshot: yield* tx.getSnapshot(stateB),
      noSnapshot: yield* tx.getSnapshot(999),
    };
  });

  // Checkpoints.
  await r("checkpoint reads", function* (tx) {
    return {
      get: yield* tx.getCheckpoint("cp2"),
      missing: yield* tx.getCheckpoint("nope"),
      anchorRoot: yield* tx.checkpointAnchor("cp3"),
      anchorFirst: yield* tx.checkpointAnchor("cp1"),
      anchorMissing: yield* tx.checkpointAnchor("nope"),
      count: yield* tx.countCheckpoints("alice", "s1", at(49)),
      countLater: yield* tx.countCheckpoints("alice", "s1", at(60)),
      session: yield* tx.sessionCheckpoints("alice", "s1"),
      orphans: yield* tx.orphanCheckpointIds(),
      orphansOfS1: yield* tx.orphanCheckpointIds("s1"),
      orphansOfS2: yield* tx.orphanCheckpointIds("s2"),
    };
  });
  const filters = [
    {},
    { sessionId: "s1" },
    { name: "first" },
    { since: at(43) },
    { until: at(43) },
    { since: at(42), until: at(44) },
    { auto: true },
    { auto: false },
    { now: at(60) },
    { sessionId: "s2" },
  ];
  for (const [i, filter] of filters.entries()) {
    await q(`listCheckpoints ${i}`, (tx) => tx.listCheckpoints({ userId: "alice", now: at(49), limit: 10, ...filter }));
  }
  let beforeSeq: number | undefined;
  for (let page = 0; page < 6; page++) {
    const rows = await q(`listCheckpoints page ${page}`, (tx) => tx.listCheckpoints({ userId: "alice", now: at(0), limit: 2, beforeSeq }));
    if (rows.length < 2) break;
    beforeSeq = rows[rows.length - 1]!.seq;
  }

  // Moves: journal, steps, take-over, leases, fencing.
  const first: Owner = { pid: 100, pidStart: "boot-a" };
  const second: Owner = { pid: 200, pidStart: null };
  await w("moves", "s1", function* (tx) {
    yield* tx.insertMove(
      {
        id: "mv1",
        sessionId: "s1",
        kind: "rollback",
        spec: JSON.stringify({ newBranch: { forkCheckpointId: "cp2" } }),
        status: "running",
        ...first,
        createdAt: at(65),
        finishedAt: null,
      },
      // A lease that runs out at once: taken over below as a dead process's move is on SQLite.
      0,
    );
    yield* tx.insertMove(
      { id: "mv2", sessionId: "s1", kind: "switch", spec: "{}", status: "running", ...second, createdAt: at(66), finishedAt: null },
      null,
    );
    yield* tx.insertMoveSteps([
      { moveId: "mv1", idx: 0, op: "undo", entryId: "s1-b1-e4", status: "pending", result: null, error: null },
      { moveId: "mv1", idx: 1, op: "replay", entryId: "s1-b1-e5", status: "pending", result: null, error: null },
    ]);
    yield* tx.insertMoveSteps([]);
    yield* tx.insertMoveSteps([{ moveId: "mv2", idx: 0, op: "undo", entryId: "s1-b1-e4", status: "done", result: '"r"', error: null }]);
    yield* tx.insertMoveSteps([
      { moveId: "mv2", idx: 1, op: "replay", entryId: "s1-b1-e5", status: "done", result: '"again"', error: null },
    ]);
  });
  const third: Owner = { pid: 300, pidStart: "boot-c" };
  await w("move take-over", "s1", function* (tx) {
    return [
      yield* tx.isMovingFrom("cp2"),
      yield* tx.isMovingFrom("cp3"),
      yield* tx.runningMoves(),
      yield* tx.runningMoves("s2"),
      // The old owner's lease given as none: the step is written and the lease left to run out.
      yield* tx.setMoveStep(first, "mv1", 0, "running", null, null, null),
      yield* tx.claimMove("mv1", { pid: 100, pidStart: null }, third, 60_000),
      yield* tx.claimMove("mv1", first, third, 60_000),
      yield* tx.claimMove("mv1", first, second, 60_000),
      yield* tx.setMoveStep(first, "mv1", 0, "done", '"old"', null, 60_000),
      yield* tx.renewMove("mv1", first, 60_000),
      yield* tx.renewMove("mv1", third, 60_000),
      yield* tx.setMoveStep(third, "mv1", 0, "unknown", null, "crashed", 60_000),
      yield* tx.setMoveStep(third, "mv1", 7, "done", null, null, 60_000),
      yield* tx.claimMove("mv2", second, third, null),
      yield* tx.moveSteps("mv1"),
      yield* tx.uncertainInvocations("s1"),
      yield* tx.runningMoves("s1"),
      yield* tx.unknownSteps("s1", "s1-b1-e4"),
      yield* tx.unknownSteps("s1", "s1-b1-e5"),
      yield* tx.lastReplay("s1", "s1-b1-e5"),
      yield* tx.lastReplay("s1", "s1-b1-e4"),
      yield* tx.unknownSteps("s2", "s1-b1-e4"),
    ];
  });
  await w("applied", "s1", function* (tx) {
    yield* tx.markApplied("s1-b1-e4", "s1", '{"ok":true}', at(70));
    yield* tx.markApplied("s1-b1-e5", "s1", null, at(71));
    const both = yield* tx.appliedTools("s1");
    yield* tx.markApplied("s1-b1-e4", "s1", '{"again":1}', at(72));
    const again = yield* tx.appliedTools("s1");
    yield* tx.unmarkApplied("s1-b1-e5");
    return { both, again, after: yield* tx.appliedTools("s1"), tool: yield* tx.getTool("s1-b1-e4"), other: yield* tx.appliedTools("s2") };
  });
  await w("set aside", "s1", function* (tx) {
    yield* tx.setAside("s1-b1-e5", "s1", "s1-b1", 5, at(72));
    const aside = yield* tx.setAsideCalls("s1");
    yield* tx.markApplied("s1-b1-e5", "s1", null, at(72));
    yield* tx.unmarkApplied("s1-b1-e5");
    return { aside, after: yield* tx.setAsideCalls("s1"), other: yield* tx.setAsideCalls("s2") };
  });
  await w("replay results", "s1", function* (tx) {
    const journaled = yield* tx.lastReplay("s1", "s1-b1-e5");
    yield* tx.keepReplayResult("s1-b1-e5", "s1", '"kept"', at(73));
    const kept = yield* tx.lastReplay("s1", "s1-b1-e5");
    yield* tx.keepReplayResult("s1-b1-e5", "s1", null, at(74));
    yield* tx.keepReplayResult("s1-b1-e4", "s1", '"newer"', at(75));
    const e4 = (yield* tx.getTool("s1-b1-e4"))!.appliedSeq;
    return {
      journaled,
      kept,
      byApplication: [
        yield* tx.replayResult("s1-b1-e4", e4),
        yield* tx.replayResult("s1-b1-e5", null),
        yield* tx.replayResult("s1-b1-e5", 1),
      ],
      replayed: yield* tx.replayedApplications("s1"),
      after: [yield* tx.lastReplay("s1", "s1-b1-e5"), yield* tx.lastReplay("s1", "s1-b1-e4")],
      other: yield* tx.lastReplay("s2", "s1-b1-e4"),
    };
  });

  // Workspaces, their stat caches, contents (as they are and in packs), trees and manifests.
  const blob = (text: string) => Buffer.from(text, "utf8");
  const blobOf = function* (tx: Tx, hash: string) {
    return (yield* tx.blobRows([hash]))[0];
  };
  await w("workspaces", "s1", function* (tx) {
    yield* tx.insertBlob(hex("a.txt"), blob("alpha\u0000\u00ff"));
    yield* tx.insertBlob(hex("a.txt"), blob("ignored"));
    yield* tx.insertBlob(hex("b.txt"), blob(""));
    yield* tx.insertBlob(hex("orphan"), blob("orphan"));
    const pack = yield* tx.insertPack("deflate-raw", blob("packed"), [
      { hash: hex("p1"), offset: 0, size: 3 },
      { hash: hex("p2"), offset: 3, size: 3 },
      { hash: hex("a.txt"), offset: 0, size: 1 },
    ]);
    const orphanPack = yield* tx.insertPack("deflate-raw", blob("lonely"), [{ hash: hex("lonely"), offset: 0, size: 6 }]);
    yield* tx.insertTrees([
      { hash: hex("t-sub"), body: JSON.stringify([["p2", hex("p2")]]) },
      {
        hash: hex("t-root"),
        body: JSON.stringify([
          ["p1", hex("p1")],
          ["sub/", hex("t-sub")],
        ]),
      },
      { hash: hex("t-orphan"), body: "[]" },
    ]);
    yield* tx.insertTrees([{ hash: hex("t-sub"), body: "ignored" }]);
    const m1 = yield* tx.putManifest(hex("m1"), JSON.stringify({ "a.txt": hex("a.txt") }), null);
    const m1again = yield* tx.putManifest(hex("m1"), "ignored", null);
    const m2 = yield* tx.putManifest(hex("m2"), JSON.stringify({ "a.txt": hex("a.txt"), "b.txt": hex("b.txt") }), null);
    const m3 = yield* tx.putManifest(hex("m3"), JSON.stringify({}), null);
    const m4 = yield* tx.putManifest(hex("t-root"), "{}", hex("t-root"));
    const ws = {
      sessionId: "s1",
      dir: "/work/x",
      exclude: '["node_modules"]',
      gitignore: true,
      manifestId: m1,
      updatedAt: at(80),
      host: "h1",
    };
    yield* tx.putWorkspace(ws);
    yield* tx.putWorkspaceStats(
      "s1",
      [
        { dir: "", body: blob("root") },
        { dir: "sub", body: blob("sub") },
      ],
      [],
    );
    yield* tx.putWorkspaceStats("s1", [{ dir: "sub", body: blob("sub 2") }], [""]);
    const stats = yield* tx.workspaceStats("s1");
    const attached = yield* tx.getWorkspace("s1");
    yield* tx.putWorkspace({ ...ws, dir: "/work/y", exclude: "[]", gitignore: false, updatedAt: at(81) });
    yield* tx.setWorkspaceManifest("s1", m2, at(82));
    const restoring = JSON.stringify({ manifestId: m2, pid: 1, pidStart: null });
    yield* tx.setWorkspaceRestoring("s1", restoring);
    const claims = [yield* tx.claimWorkspaceRestore("s1", "other", "x"), yield* tx.claimWorkspaceRestore("s1", restoring, restoring)];
    yield* tx.insertCheckpointFiles({ checkpointId: "cp3", manifestId: m2, dir: "/work/y", exclude: "[]", gitignore: false });
    yield* tx.insertCheckpointFiles({ checkpointId: "cp1", manifestId: m1, dir: "/work/y", exclude: "[]", gitignore: true });
    yield* tx.insertCheckpointFiles({ checkpointId: "cp5", manifestId: m3, dir: "/work/y", exclude: "[]", gitignore: false });
    yield* tx.insertCheckpointFiles({
      checkpointId: "cp6",
      manifestId: m4,
      dir: "/work/y",
      exclude: "[]",
      gitignore: false,
      unapplied: '["s1-b1-e4"]',
      unknown: '["s1-b1-e4","s1-b1-e5"]',
    });
    const byHash = <T extends { hash: string }>(rows: T[]) => rows.sort((a, b) => (a.hash < b.hash ? -1 : 1));
    return {
      ids: [m1, m1again, m2, m3, m4],
      packs: [pack > 0, orphanPack > pack],
      attached,
      stats: stats.sort((a, b) => (a.dir < b.dir ? -1 : 1)),
      statsAfter: yield* tx.workspaceStats("s1"),
      claims,
      workspace: yield* tx.getWorkspace("s1"),
      none: yield* tx.getWorkspace("s2"),
      session: yield* tx.getSession("s1"),
      restoringAll: yield* tx.restoringWorkspaces(),
      blob: yield* blobOf(tx, hex("a.txt")),
      empty: yield* blobOf(tx, hex("b.txt")),
      packed: { ...(yield* blobOf(tx, hex("p2")))!, packId: null },
      noBlob: yield* blobOf(tx, hex("none")),
      present: (yield* tx.presentBlobs([hex("a.txt"), hex("none"), hex("p1")])).sort(),
      packContents: (yield* tx.getPacks([pack, 999])).map((p) => [p.codec, p.content]),
      trees: byHash(yield* tx.getTrees([hex("t-root"), hex("t-sub"), hex("none")])),
      manifestId: yield* tx.manifestId(hex("m2")),
      noManifestId: yield* tx.manifestId(hex("none")),
      manifest: yield* tx.getManifest(m2),
      treeManifest: yield* tx.getManifest(m4),
      noManifest: yield* tx.getManifest(999),
      files: yield* tx.checkpointManifest("cp3"),
      gitignoreFiles: yield* tx.checkpointManifest("cp1"),
      noFiles: yield* tx.checkpointManifest("cp2"),
      last: yield* tx.lastCheckpointFiles("s1-b1", 0, 6),
      lastBefore: yield* tx.lastCheckpointFiles("s1-b1", 0, 4),
      lastNone: yield* tx.lastCheckpointFiles("s1-b1", 6, 6),
      lastWithCalls: yield* tx.lastCheckpointFiles("s1-b1", 0, 3),
    };
  });
  await w("checkpoint calls", "s1", function* (tx) {
    const awaiting = [yield* tx.checkpointsAwaiting("s1", "s1-b1-e4"), yield* tx.checkpointsAwaiting("s2", "s1-b1-e4")];
    yield* tx.setCheckpointCalls({ checkpointId: "cp6", unapplied: null, unknown: '["s1-b1-e5"]' });
    yield* tx.setCheckpointCalls({ checkpointId: "cp2", unapplied: "[]", unknown: null });
    return {
      awaiting,
      after: [yield* tx.checkpointsAwaiting("s1", "s1-b1-e4"), yield* tx.checkpointsAwaiting("s1", "s1-b1-e5")],
      files: [yield* tx.checkpointManifest("cp6"), yield* tx.checkpointManifest("cp2")],
    };
  });
  // Expiry: cp2 is a running move's target, cp4 and cp5 expired; cp5 has files.
  await w("expire while moving", "s1", (tx) => tx.deleteExpiredCheckpoints(at(200), "s1"));
  await w("finish moves", "s1", function* (tx) {
    yield* tx.finishMove("mv1", "done", at(201));
    yield* tx.finishMove("mv2", "failed", at(202));
    return [
      yield* tx.deleteFinishedMoves("s1"),
      yield* tx.runningMoves(),
      yield* tx.moveSteps("mv2"),
      yield* tx.uncertainInvocations("s1"),
      yield* tx.lastReplay("s1", "s1-b1-e4"),
      yield* tx.lastReplay("s1", "s1-b1-e5"),
    ];
  });
  await w("resolve unknown step", "s1", function* (tx) {
    yield* tx.resolveUnknownStep("mv1", 1, "failed", null, "not unknown");
    yield* tx.resolveUnknownStep("mv1", 0, "done", '{"ok":1}', null);
    yield* tx.resolveUnknownStep("mv1", 0, "failed", null, "again");
    const steps = yield* tx.moveSteps("mv1");
    return [steps, yield* tx.unknownSteps("s1", "s1-b1-e4"), yield* tx.uncertainInvocations("s1"), yield* tx.deleteFinishedMoves("s1")];
  });

  await g("expire", (tx) => tx.deleteExpiredCheckpoints(at(200)));
  await g("after expire", function* (tx) {
    return [yield* tx.sessionCheckpoints("alice", "s1"), yield* tx.checkpointManifest("cp5")];
  });
  await g("deleteUnreferencedFiles while restoring", (tx) => tx.deleteUnreferencedFiles());
  await g("deleteUnreferencedFiles", function* (tx) {
    yield* tx.setWorkspaceRestoring("s1", null);
    return [
      yield* tx.deleteUnreferencedFiles(),
      yield* tx.presentBlobs([hex("orphan"), hex("lonely")]),
      (yield* tx.presentBlobs([hex("a.txt"), hex("p1"), hex("p2")])).sort(),
      (yield* tx.getTrees([hex("t-orphan"), hex("t-root"), hex("t-sub")])).map((t) => t.hash).sort(),
      yield* tx.getManifest(3),
    ];
  });

  // LangGraph tables.
  const json = (value: unknown) => Buffer.from(JSON.stringify(value));
  await w("langgraph", "s1", function* (tx) {
    const lg = tx.langgraph;
    yield* lg.insertThread({ userId: "alice", threadId: "t1", checkpointNs: "", sessionId: "s1", startCheckpointId: "cp6" });
    // Bob's thread holds a checkpoint whose metadata is not JSON.
    yield* lg.insertThread({ userId: "Bob", threadId: "t1", checkpointNs: "inner", sessionId: "s5", startCheckpointId: "cp6" });
    const cps = [
      ["1ef0-a", null, "cp1", { source: "input", step: -1, agent: "planner" }],
      ["1ef0-b", "1ef0-a", "cp3", { source: "loop", step: 0, agent: "planner", nested: { x: [1, 2] } }],
      ["1ef0-B", "1ef0-a", "cp3", { source: "loop", step: 1, agent: "critic" }],
    ] as const;
    for (const [checkpointId, parentCheckpointId, fpCheckpointId, metadata] of cps) {
      yield* lg.insertCheckpoint({
        sessionId: "s1",
        checkpointId,
        parentCheckpointId,
        fpCheckpointId,
        type: "json",
        checkpoint: json({ id: checkpointId }),
        metadataType: "json",
        metadata: json(metadata),
        messagesVersion: checkpointId === "1ef0-a" ? null : '"2"',
      });
    }
    yield* lg.insertCheckpoint({
      sessionId: "s5",
      checkpointId: "1ef0-c",
      parentCheckpointId: null,
      fpCheckpointId: "cp1",
      type: "bin",
      checkpoint: Buffer.from([0, 1, 2, 255]),
      metadataType: "msgpack",
      metadata: Buffer.from([0x81, 0xa1, 0x61, 0x01, 0xff]),
      messagesVersion: null,
    });
    yield* lg.insertBlob({ sessionId: "s1", channel: "memory", version: "1", type: "json", value: json({ m: 1 }) });
    yield* lg.insertBlob({ sessionId: "s1", channel: "memory", version: "1", type: "json", value: json({ m: "ignored" }) });
    yield* lg.insertBlob({ sessionId: "s1", channel: "memory", version: '"2"', type: "bytes", value: Buffer.alloc(0) });
    const write = (taskId: string, idx: number, value: string) => ({
      sessionId: "s1",
      checkpointId: "1ef0-b",
      taskId,
      idx,
      channel: "messages",
      type: "json",
      value: json(value),
      taskPath: taskId === "t-b" ? "~path" : "",
    });
    yield* lg.insertWrites([write("t-b", 0, "one"), write("t-a", 1, "two"), write("t-b", 0, "dup")], false);
    yield* lg.insertWrites([write("t-b", 0, "ignored")], false);
    yield* lg.insertWrites([write("t-a", 1, "replaced"), write("t-a", -1, "special"), write("t-a", 1, "replaced twice")], true);
    yield* lg.insertWrites([], true);
  });
  await r("langgraph reads", function* (tx) {
    const lg = tx.langgraph;
    const byId = <T extends { checkpointId: string }>(rows: T[]) => [...rows].sort((a, b) => (a.checkpointId < b.checkpointId ? -1 : 1));
    return {
      thread: yield* lg.getThread("alice", "t1", ""),
      otherUser: yield* lg.getThread("Bob", "t1", ""),
      sessions: yield* lg.threadSessions("alice", "t1"),
      isThread: [yield* lg.isThreadSession("s1"), yield* lg.isThreadSession("s2")],
      threadOf: [yield* lg.threadOfSession("s5"), yield* lg.threadOfSession("s2")],
      points: byId(yield* lg.pointsOf("s1")),
      point: yield* lg.pointOf("s1", "1ef0-b"),
      noPoint: yield* lg.pointOf("s1", "nope"),
      latest: yield* lg.latestPoint("s1"),
      latestNone: yield* lg.latestPoint("s2"),
      // Two LangGraph checkpoints in one forkpoint checkpoint: the newest id of the latest seq.
      latestOn: [
        yield* lg.latestPointOn("s1", (yield* lg.pointOf("s1", "1ef0-a"))!.branchId),
        yield* lg.latestPointOn("s1", (yield* lg.pointOf("s1", "1ef0-b"))!.branchId),
        yield* lg.latestPointOn("s1", "nope"),
      ],
      inFp: [yield* lg.checkpointInFp("cp3"), yield* lg.checkpointInFp("cp2")],
      get: [yield* lg.getCheckpoint("s1"), yield* lg.getCheckpoint("s1", "1ef0-a"), yield* lg.getCheckpoint("s1", "nope")],
      uses: [yield* lg.usesFpCheckpoint("cp1"), yield* lg.usesFpCheckpoint("cp6"), yield* lg.usesFpCheckpoint("cp2")],
      blob: yield* lg.getBlob("s1", "memory", "1"),
      emptyBlob: yield* lg.getBlob("s1", "memory", '"2"'),
      noBlob: yield* lg.getBlob("s1", "memory", "3"),
      hasChild: [yield* lg.hasChild("s1", "1ef0-a"), yield* lg.hasChild("s1", "1ef0-b")],
      writes: yield* lg.writesOf("s1", "1ef0-b"),
      noWrites: yield* lg.writesOf("s1", "1ef0-a"),
      // In no order: sorted here (by the key each list's rows have).
      blobs: [...(yield* lg.blobsOf("s1"))].sort((a, b) => (a.version < b.version ? -1 : 1)),
      allWrites: [...(yield* lg.allWritesOf("s1"))].sort((a, b) =>
        `${a.checkpointId}/${a.taskId}/${a.idx}` < `${b.checkpointId}/${b.taskId}/${b.idx}` ? -1 : 1,
      ),
    };
  });
  const lgFilters = [
    { metadata: [] },
    { threadId: "t1", metadata: [] },
    { threadId: "t1", checkpointNs: "", metadata: [] },
    { checkpointId: "1ef0-a", metadata: [] },
    { before: "1ef0-b", metadata: [] },
    { metadata: [["source", '"loop"']] },
    {
      metadata: [
        ["agent", '"planner"'],
        ["step", "0"],
      ],
    },
    { metadata: [["nested", '{"x":[1,2]}']] },
    { metadata: [["nested", '{ "x" : [1, 2] }']] },
    { metadata: [["missing", "null"]] },
    { metadata: [["step", "1"]], limit: 1 },
    { metadata: [], limit: 2 },
    { metadata: [], limit: 0 },
  ] as const;
  for (const [i, filter] of lgFilters.entries()) {
    await q(`lg listCheckpoints ${i}`, (tx) =>
      tx.langgraph.listCheckpoints({ userId: "alice", ...filter, metadata: filter.metadata.map(([k, v]) => [k, v] as [string, string]) }),
    );
  }
  await q("lg listCheckpoints other user", (tx) => tx.langgraph.listCheckpoints({ userId: "Bob", metadata: [] }));
  await q("lg threadSessions other user", (tx) => tx.langgraph.threadSessions("Bob", "t1"));

  // Pruning and deletion.
  await g("deleteUnreferencedSnapshots", function* (tx) {
    yield* tx.putSnapshot(hex("state c"), '{"c":3}');
    return [yield* tx.deleteUnreferencedSnapshots(), yield* tx.getSnapshot(stateA), yield* tx.getSnapshot(3)];
  });
  await w("deleteThreadRows", "s5", function* (tx) {
    yield* tx.langgraph.deleteThreadRows("s5");
    return yield* tx.langgraph.threadOfSession("s5");
  });
  await w("deleteSession s2", "s2", (tx) => tx.deleteSession("s2"));
  await w("deleteSession s1", "s1", (tx) => tx.deleteSession("s1"));
  await q("after delete", function* (tx) {
    return [
      yield* tx.allSessionIds(),
      yield* tx.getSession("s1"),
      yield* tx.listBranches("s1"),
      yield* tx.sessionEvents("s1"),
      yield* tx.importedCalls("s1"),
      yield* tx.runningTools(),
      yield* tx.appliedTools("s1"),
      yield* tx.listUsers(undefined, 10),
      yield* tx.langgraph.listCheckpoints({ userId: "alice", metadata: [] }),
      yield* tx.getWorkspace("s1"),
    ];
  });
  return log;
}

/**
 * What may differ, made equal: SQLite's checkpoint seq is the insertion time in µs (PostgreSQL's an identity: only the
 * order is compared; a LangGraph point row's too), applied_seq values (only their order counts), whether a move's lease holds (SQLite's owners are
 * processes: null there; PostgreSQL's leases are checked in tests/store/postgres/store.test.ts), and the
 * session's newest checkpoint time that PostgreSQL's `currentOf` reads along (SQLite reads it when a checkpoint is written).
 * Session flags are booleans on both.
 */
function normalize(value: unknown, parentKey = ""): unknown {
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [k, normalize(v)]));
  if (value instanceof Set || Buffer.isBuffer(value) || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    const rows = value.map((v) => normalize(v, parentKey));
    return parentKey === "uncertain" ? rows.sort() : rows;
  }
  const row = { ...(value as Record<string, unknown>) };
  const isCheckpoint = "checksum" in row || row.source === "checkpoint";
  // A LangGraph point row carries its forkpoint checkpoint's seq.
  const isPoint = "fpCheckpointId" in row && "headHash" in row;
  if (isCheckpoint || isPoint) delete row.seq;
  if ("appliedSeq" in row) row.appliedSeq = row.appliedSeq === null ? null : "set";
  if ("leaseHeld" in row) delete row.leaseHeld;
  if ("lastCheckpointAt" in row) delete row.lastCheckpointAt;
  for (const [k, v] of Object.entries(row)) row[k] = normalize(v, k);
  return row;
}

describe.skipIf(!server)("a PostgresStore answers every port call as a SqliteStore does", () => {
  let sqlite: SqliteStore, postgres: PostgresStore, dir: string;
  let expected: Log, actual: Log;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "forkpoint-conformance-"));
    sqlite = new SqliteStore({ path: path.join(dir, "f.db"), durability: "normal", busyTimeoutMs: 5000, readonly: false });
    postgres = await PostgresStore.open(await freshPgDatabase());
    expected = await scenario(sqlite);
    actual = await scenario(postgres);
  });
  afterAll(async () => {
    await sqlite?.close();
    await postgres?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("runs the same calls", () => {
    expect(actual.map(([label]) => label)).toEqual(expected.map(([label]) => label));
  });

  it("gives the same results, call by call", () => {
    for (const [i, [label, value]] of expected.entries()) {
      expect(normalize(actual[i]![1]), label).toEqual(normalize(value));
    }
  });

  it("reads back times, booleans and hashes exactly (not just equal after normalizing)", () => {
    const pick = (log: Log, label: string) => log.find(([l]) => l === label)![1];
    const entries = pick(actual, "entries") as { getEntry: { createdAt: number; hash: string } };
    expect(entries.getEntry.createdAt).toBe(at(14) + 0.001);
    expect(entries.getEntry.hash).toBe(hex("s1-b1/4"));
    const session = pick(actual, "getSession s1") as { hasTools: unknown; createdAt: number };
    expect(session.hasTools).toBe(true);
    expect(session.createdAt).toBe(T0);
  });

  it("orders checkpoints by seq, growing in insertion order", () => {
    const pick = (log: Log) => (log.find(([l]) => l === "listCheckpoints 0")![1] as { id: string }[]).map((c) => c.id);
    expect(pick(actual)).toEqual(pick(expected));
  });
});
