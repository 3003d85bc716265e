// exportSession: one session's whole tree (branches, entries, tool completions, states, checkpoints, events) as a
// deterministic JSON document. Verified like `verify` as it is read: a damaged session is not exported.
import type { LogChunk, SessionCheck, SessionWork } from "./maintenance/session-check.js";
import { sessionSlices, sessionWork } from "./maintenance/session-check.js";
import { z } from "zod";
import { IntegrityError, NotFoundError } from "../models/errors.js";
import { idSchema, parseInput, userScope, parseOptions } from "../models/inputs.js";
import type { JsonObject, JsonValue } from "../models/json.js";
import { longCallFields, type LongCallOptions } from "../models/progress.js";
import {
  EXPORT_FORMAT,
  EXPORT_VERSION,
  type ExportedBranch,
  type ExportedCheckpoint,
  type ExportedEntry,
  type ExportedLangGraph,
  type ExportedState,
  type SessionExport,
} from "../models/session-export.js";
import type { BranchContinuation, BranchRow, CheckpointRow, EventRow, SessionRow, Step, ToolRow, Tx } from "../store/port/index.js";
import { langgraphOf, readLangGraph, type LangGraphRows } from "./transfer/langgraph-rows.js";
import type { EngineContext } from "./core/context.js";
import { ownedCurrent, ownedSession } from "./core/owned.js";
import { EMPTY_STATE_HASH, portableChecksum } from "./integrity/hashes.js";
import { LongCall, runSlices } from "./maintenance/long-call.js";
import type { Head } from "./core/head.js";
const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

const exportScope = z.strictObject({ ...userScope.shape, ...longCallFields });
export type ExportScope = z.infer<typeof exportScope>;

/** The scope of `exportSession`: the owner, and the long-call options. */
export type ExportOptions = { userId: string } & LongCallOptions;

/**
 * Progress is counted in log entries and checkpoints, as `verify` counts them: the session's tree is listed in one read
 * transaction (branches with their heads, checkpoints, events), then its entries are read and verified in chunks,
 * one read transaction each. Entries never change and a completion is written once, so the document is the session
 * as it was when the call started (a completion written meanwhile may be in it); a session deleted meanwhile is a
 * `NotFoundError`. An abort rejects with `AbortedError`.
 */
export async function exportSession(ctx: EngineContext, sessionId: unknown, scope: unknown): Promise<SessionExport> {
  const id = parseInput(idSchema, sessionId, "sessionId");
  const o = parseOptions(exportScope, scope, "scope");
  return (await exportDocument(ctx, id, o)).doc;
}

/**
 * Makes a checkpoint row (not stored) at the session's current head, inside the export's first read: `clone`'s mark,
 * which the copy holds as one of its checkpoints.
 */
export type MarkAt = (tx: Tx, current: { session: SessionRow; branch: BranchRow; head: Head }) => Step<CheckpointRow>;

/**
 * `exportSession` of a checked id and scope. With `markAt`, the document is the session exactly as of the first read
 * (`clone`): it holds the mark made there, and a call still running then has no completion in it even if one is
 * written while the entries are read.
 */
export async function exportDocument(
  ctx: EngineContext,
  id: string,
  o: ExportScope,
  markAt?: MarkAt,
): Promise<{ doc: SessionExport; mark: CheckpointRow | undefined }> {
  const call = new LongCall(o);
  const { session, work, events, mark, running, langgraph, nexts } = await ctx.store.read((tx) => readSessionUnit(tx, id, o, markAt));
  call.start(work.units);
  const stateIds = new Set<number>();
  const read: SeqEntry[] = [];
  const check: SessionCheck = {
    problems: [],
    snapshots: new Map(),
    onChunk: (tx, chunk) => collectChunk(tx, chunk, stateIds, read, running),
  };
  await runSlices(call, sessionSlices(work, check), (body) => ctx.store.read(body));
  const problems = check.problems;
  if (problems.length > 0) {
    throw new IntegrityError(
      `session ${session.id} is damaged (${problems[0]!.kind} ${problems[0]!.id}: ${problems[0]!.detail}); fp.verify() lists every problem`,
    );
  }
  const branches = work.branches.map((b) => ({ b: b.branch, next: nexts.get(b.branch.id) }));
  const entries = inCreationOrder(read);
  const doc = await ctx.store.read((tx) => exportLogUnit(tx, session, o, ctx, branches, work, stateIds, entries, events, langgraph));
  call.finish();
  return { doc, mark };
}

function* exportLogUnit(
  tx: Tx,
  session: SessionRow,
  o: ExportScope,
  ctx: EngineContext,
  branches: { b: BranchRow; next: BranchContinuation | undefined }[],
  work: SessionWork,
  stateIds: Set<number>,
  entries: ExportedEntry[],
  events: EventRow[],
  lg: LangGraphRows | undefined,
): Step<SessionExport> {
  yield* ownedSession(tx, session.id, o.userId); // deleted meanwhile: what was read of it is not a whole session
  // Expired checkpoints are gone from every read, but a branch forking from one keeps it, and so does a LangGraph
  // checkpoint stored in one or a thread starting at one (as prune does).
  const now = ctx.now();
  const kept = new Set<string | null>(branches.map(({ b }) => b.forkCheckpointId));
  if (lg) for (const id of lg.usedCheckpoints) kept.add(id);
  const live = work.checkpoints.filter((c) => c.expiresAt === null || c.expiresAt > now || kept.has(c.id));
  const checkpoints: ExportedCheckpoint[] = [];
  for (const c of live) {
    if (c.stateId !== null) stateIds.add(c.stateId);
    const state = c.stateId === null ? null : yield* stateHash(tx, c.stateId);
    checkpoints.push({
      id: c.id,
      branchId: c.branchId,
      position: c.position,
      name: c.name,
      auto: c.auto,
      metadata: parse<JsonObject>(c.metadata),
      state,
      headHash: c.headHash,
      createdAt: c.createdAt,
      expiresAt: c.expiresAt,
      checksum: portableChecksum(c, state ?? EMPTY_STATE_HASH),
    });
  }
  const snapshots = [];
  for (const sid of stateIds) snapshots.push((yield* tx.getSnapshot(sid))!);
  const states: ExportedState[] = snapshots
    // A state keeps the version it was written under (absent for 1, as exports made before versions have it).
    .map((s) => ({ hash: s.hash, value: JSON.parse(s.body) as JsonValue, ...(s.version === 1 ? {} : { version: s.version }) }))
    .sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0));
  const langgraph: ExportedLangGraph | undefined = lg && langgraphOf(lg);
  return {
    format: EXPORT_FORMAT,
    // Version 1 (the same bytes as before version 2) unless the document carries a LangGraph thread.
    version: langgraph ? EXPORT_VERSION : 1,
    session: {
      id: session.id,
      title: session.title,
      metadata: parse<JsonObject>(session.metadata),
      currentBranchId: session.currentBranchId,
      origin:
        session.originSessionId && session.originCheckpointId
          ? { sessionId: session.originSessionId, checkpointId: session.originCheckpointId }
          : null,
      createdAt: session.createdAt,
      updatedAt: session.updatedAt,
    },
    branches: branches.map(({ b, next }) => ({
      id: b.id,
      parentId: b.parentId,
      forkCheckpointId: b.forkCheckpointId,
      forkPosition: b.forkPosition,
      forkEntryId: b.forkEntryId,
      name: b.name,
      reason: b.reason as ExportedBranch["reason"],
      createdAt: b.createdAt,
      ...(next ? { continuedBy: next.byBranchId, continuedAt: next.atPosition } : {}),
      ...(next && next.fromPosition !== null ? { continuedFrom: next.fromPosition } : {}),
    })),
    entries,
    states,
    checkpoints,
    events: events.map((e) => ({ kind: e.kind, refId: e.refId, branchId: e.branchId, detail: e.detail, createdAt: e.createdAt })),
    ...(langgraph ? { langgraph } : {}),
  };
}

/** An exported entry with the store's insertion order of it (read branch by branch, listed by that order). */
type SeqEntry = { seq: number; entry: ExportedEntry };

/**
 * The entries in the order they were written, across branches: the order `versions` lists a message's versions by
 * (creation), which an import rebuilds by inserting them in document order.
 */
function inCreationOrder(read: SeqEntry[]): ExportedEntry[] {
  return read.sort((a, b) => a.seq - b.seq).map((r) => r.entry);
}

function* collectChunk(tx: Tx, chunk: LogChunk, stateIds: Set<number>, read: SeqEntry[], running: ReadonlySet<string>) {
  const tools = new Map(chunk.tools.map((t) => [t.id, t]));
  for (const e of chunk.entries) {
    if (e.kind === "state" && e.stateId !== null) stateIds.add(e.stateId);
    read.push({
      seq: e.seq,
      entry: {
        id: e.id,
        branchId: e.branchId,
        position: e.position,
        kind: e.kind,
        role: e.role,
        content: parse<JsonValue>(e.content),
        tool: e.tool,
        callId: e.callId,
        clientId: e.clientId,
        metadata: parse<JsonObject>(e.metadata),
        state: e.kind === "state" ? yield* stateHash(tx, e.stateId) : null,
        createdAt: e.createdAt,
        hash: e.hash,
        completion: e.kind === "tool" && !running.has(e.id) ? completionOf(tools.get(e.id)) : null,
      },
    });
  }
}

function* readSessionUnit(tx: Tx, id: string, o: ExportScope, markAt: MarkAt | undefined) {
  if (!markAt) {
    const session = yield* ownedSession(tx, id, o.userId);
    const work = yield* sessionWork(tx, session.id);
    // In this read: the LangGraph rows go with the checkpoints read here (a put made later is not in the document).
    const langgraph = yield* readLangGraph(tx, session.id);
    const nexts = yield* continuations(tx, work);
    return { session, work, events: yield* tx.sessionEvents(session.id), mark: undefined, running: new Set<string>(), langgraph, nexts };
  }
  const current = yield* ownedCurrent(tx, id, o.userId);
  const work = yield* sessionWork(tx, id);
  const mark = yield* markAt(tx, current);
  // Listed last, as the newest checkpoint; not stored, so the checks pass it by (as one deleted meanwhile).
  work.checkpoints.push(mark);
  work.units += 1;
  // Their completion, if written after this read, is not of the session as of this read.
  const running = new Set((yield* tx.callOwners(id)).map((c) => c.entryId));
  // A clone is not the thread (its user holds that thread already): its copy carries no LangGraph rows.
  const nexts = yield* continuations(tx, work);
  return { session: current.session, work, events: yield* tx.sessionEvents(id), mark, running, langgraph: undefined, nexts };
}

function* stateHash(tx: Tx, stateId: number | null): Step<string | null> {
  if (stateId === null) return null;
  const snapshot = yield* tx.getSnapshot(stateId);
  if (!snapshot) throw new NotFoundError("state snapshot", String(stateId));
  return snapshot.hash;
}

function completionOf(t: ToolRow | undefined): ExportedEntry["completion"] {
  if (!t || t.status === null) return null;
  return {
    status: t.status,
    result: t.status === "succeeded" ? parse<JsonValue>(t.result) : null,
    error: t.status === "failed" ? parse<JsonValue>(t.error) : null,
    completedAt: t.completedAt!,
    hash: t.resultHash!,
  };
}

/**
 * The branch continuing each branch (a failed guarded block's), read with the branches: one made while the entries
 * are read would name a branch the document does not hold, and its import would refuse it.
 */
function* continuations(tx: Tx, work: SessionWork) {
  const out = new Map<string, BranchContinuation | undefined>();
  for (const { branch } of work.branches) out.set(branch.id, yield* tx.branchContinuation(branch.id));
  return out;
}
