// importSession: a session export written back, ids and times kept, owned by the given user, in one transaction.
// The document is untrusted: its links are checked, every hash and checksum is recomputed, and any id already in the
// database refuses the whole import. The world is not imported: nothing of the new session is applied, and its tool
// calls (which ran elsewhere, or were written by whoever made the document) are never replayed here.
import { timesOrdered } from "./transfer/times-ordered.js";
import { z } from "zod";
import { ConflictError, StateVersionError, ValidationError } from "../models/errors.js";
import { parseInput, userScope, parseOptions } from "../models/inputs.js";
import { toJsonText } from "../models/json.js";
import { longCallFields, type LongCallOptions } from "../models/progress.js";
import { sessionExportSchema, type SessionExport } from "../models/session-export.js";
import type { BranchRow, Step, Tx } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { EMPTY_STATE_HASH, checkpointChecksum } from "./integrity/hashes.js";
import { LongCall, runSlices, withoutStore } from "./maintenance/long-call.js";
import { DEFAULT_STATE_SCHEMA } from "./core/state-schema.js";
import { DocumentCheck, checkBranchLinks, checkUniqueIds, type PreparedEntry } from "./transfer/document-check.js";
import { prepareLangGraph, refuseExistingThread, writeLangGraph, type PreparedLangGraph } from "./transfer/langgraph-rows.js";
export const importScope = z.strictObject({ ...userScope.shape, ...longCallFields });

/** The scope of `importSession`: the new owner, and the long-call options. */
export type ImportOptions = { userId: string } & LongCallOptions;

/**
 * Progress is counted in the document's entries, states and checkpoints. What reads the caller's document runs as the
 * call is made (its shape, and every payload serialized); the checks of every link, hash and checksum then run in
 * chunks, yielding between them, with no transaction open; the session is written at the end in one transaction, so
 * an abort (checked up to then) or any refusal leaves the database exactly as it was.
 */
export async function importSession(ctx: EngineContext, document: unknown, scope: unknown): Promise<SessionRef> {
  const prepared = await prepareImport(ctx, document, scope, refuseNewerStates);
  const ref = await ctx.store.write({ sessionId: prepared.doc.session.id }, (tx) => importUnit(tx, prepared, ctx));
  prepared.call.finish();
  return ref;
}

/** A document read and checked, ready to be written (by `importUnit`, in the caller's write transaction). */
export interface PreparedImport {
  doc: SessionExport;
  checked: DocumentCheck;
  userId: string;
  sessionMetadata: string | null;
  /** The LangGraph thread the document carries (version 2), decoded and checked. */
  langgraph: PreparedLangGraph | undefined;
  call: LongCall;
}

/**
 * A state recorded under a version newer than this opener's `stateVersion` could be stored but never read here
 * (getState, restore, setState would fail): the import is refused before anything is written.
 */
function refuseNewerStates(ctx: EngineContext, doc: SessionExport): void {
  const newest = (ctx.stateSchema ?? DEFAULT_STATE_SCHEMA).version;
  doc.states.forEach((s, i) => {
    const version = s.version ?? 1;
    if (version <= newest) return;
    throw new StateVersionError(
      "STATE_VERSION_UNKNOWN",
      version,
      `document.states[${i}] was recorded under state version ${version}, newer than this forkpoint's stateVersion ${newest}: ` +
        `import it where forkpoint is opened with stateVersion ${version} or later`,
    );
  });
}

/**
 * Everything `importSession` does before its write: the document read, every check made, no transaction open.
 * `check` runs on the parsed document before the rest (import refuses states this opener cannot read; a clone, whose
 * states are the database's own already, does not).
 */
export async function prepareImport(
  ctx: EngineContext,
  document: unknown,
  scope: unknown,
  check?: (ctx: EngineContext, doc: SessionExport) => void,
): Promise<PreparedImport> {
  const doc = parseInput(sessionExportSchema, document, "document") as SessionExport;
  const { userId, ...options } = parseOptions(importScope, scope, "scope");
  check?.(ctx, doc);
  const call = new LongCall(options);
  const text = (value: unknown, field: string) => toJsonText(value, field, ctx.limits);
  const entries: PreparedEntry[] = doc.entries.map((e, i) => {
    const field = `document.entries[${i}]`;
    // A message's content (or a call's args) may be JSON null itself; only a state entry has none at all.
    if (e.kind === "state" && e.content !== null) throw new ValidationError(`${field}.content`, "a state entry has no content");
    if ((e.kind === "state") !== (e.state !== null))
      throw new ValidationError(
        `${field}.state`,
        e.kind === "state" ? "is required for a state entry" : "only a state entry sets the state",
      );
    if ((e.kind === "message") !== (e.role !== null))
      throw new ValidationError(`${field}.role`, e.kind === "message" ? "is required for a message" : "only a message has a role");
    if ((e.kind === "tool") !== (e.tool !== null))
      throw new ValidationError(`${field}.tool`, e.kind === "tool" ? "is required for a tool call" : "only a tool call names a tool");
    if (e.kind !== "tool" && e.completion !== null) throw new ValidationError(`${field}.completion`, "only a tool call has a completion");
    const c = e.completion;
    return {
      doc: e,
      field,
      content: e.kind === "state" ? null : text(e.content, `${field}.content`),
      metadata: e.metadata === null ? null : text(e.metadata, `${field}.metadata`),
      result: c === null || c.status !== "succeeded" ? null : text(c.result, `${field}.completion.result`),
      error: c === null || c.status !== "failed" ? null : text(c.error, `${field}.completion.error`),
    };
  });
  const stateTexts = doc.states.map((s, i) => ({ hash: s.hash, text: text(s.value, `document.states[${i}].value`), version: s.version }));
  const sessionMetadata = doc.session.metadata === null ? null : text(doc.session.metadata, "document.session.metadata");
  const checkpointMetadata = doc.checkpoints.map((c, i) =>
    c.metadata === null ? null : text(c.metadata, `document.checkpoints[${i}].metadata`),
  );
  checkUniqueIds(doc);
  checkBranchLinks(doc);
  if (!doc.branches.some((b) => b.id === doc.session.currentBranchId)) {
    throw new ValidationError(
      "document.session.currentBranchId",
      `branch ${doc.session.currentBranchId} is not among the document's branches`,
    );
  }

  const langgraph = prepareLangGraph(doc);

  // Refused before the long checks (and before any progress), and again when writing (another call may import the
  // same ids, or the user's run make the same thread, meanwhile).
  await ctx.store.read((tx) => refuseExisting(tx, doc, langgraph, userId));
  call.start(entries.length + doc.states.length + doc.checkpoints.length);
  await call.pause();
  const checked = new DocumentCheck(doc, entries, stateTexts, checkpointMetadata);
  await runSlices(call, checked.slices(), withoutStore);
  call.check();
  return { doc, checked, userId, sessionMetadata, langgraph, call };
}

/** Writes a prepared document (ids refused again: another call may have imported them meanwhile). */
export function* importUnit(tx: Tx, prepared: PreparedImport, ctx: EngineContext): Step<SessionRef> {
  const { doc, checked, userId, sessionMetadata, langgraph } = prepared;
  yield* refuseExisting(tx, doc, langgraph, userId);
  const stateIds = yield* tx.putSnapshots([...checked.stateBodies].map(([hash, s]) => ({ hash, body: s.body, version: s.version })));
  const stateIdOf = (hash: string | null) => (hash === null ? null : stateIds.get(hash)!);
  const s = doc.session;
  yield* tx.insertSession({
    id: s.id,
    userId,
    title: s.title,
    metadata: sessionMetadata,
    currentBranchId: s.currentBranchId,
    originSessionId: s.origin?.sessionId ?? null,
    originCheckpointId: s.origin?.checkpointId ?? null,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  });
  // Branches first, then the entries in the order they were written (a message's versions are listed in the order
  // their rows are inserted), not branch by branch.
  for (const { continuedBy, continuedAt, continuedFrom, ...b } of doc.branches)
    yield* tx.insertBranch({ ...b, sessionId: s.id } satisfies BranchRow);
  // A failed guarded block's branches, continued by its rollback's (all inserted by now).
  for (const b of doc.branches)
    if (b.continuedBy !== undefined) yield* tx.continueBranch(b.id, b.continuedBy, b.continuedAt!, b.continuedFrom);
  let hasTools = false;
  for (const e of checked.inWriteOrder()) {
    const d = e.doc;
    yield* tx.insertEntry({
      id: d.id,
      branchId: d.branchId,
      position: d.position,
      kind: d.kind,
      role: d.role,
      content: e.content,
      tool: d.tool,
      callId: d.callId,
      clientId: d.clientId,
      metadata: e.metadata,
      stateId: stateIdOf(e.head!.stateHash),
      msgCount: e.head!.msgCount,
      hash: d.hash,
      createdAt: d.createdAt,
    });
    const c = d.completion;
    if (c)
      yield* tx.insertToolResult({
        entryId: d.id,
        status: c.status,
        result: e.result,
        error: e.error,
        completedAt: c.completedAt,
        hash: c.hash,
      });
    if (d.kind === "tool") {
      hasTools = true;
      yield* tx.insertImportedCall(d.id, s.id);
    }
  }
  if (hasTools) yield* tx.markHasTools(s.id);
  for (const [i, c] of doc.checkpoints.entries()) {
    const base = checked.checkpointBase(c, i, s.id, userId);
    // The stored checksum covers the owner: it is computed anew for the importing user.
    yield* tx.insertCheckpoint(
      { ...base, stateId: stateIdOf(c.state), checksum: checkpointChecksum(base, c.state ?? EMPTY_STATE_HASH) },
      ctx.now(),
    );
  }
  yield* writeLangGraph(tx, langgraph, s.id, userId);
  for (const e of doc.events) yield* tx.insertEvent({ sessionId: s.id, ...e }, { asRecorded: true });
  if (!timesOrdered(doc)) yield* tx.markTimesUnordered(s.id);
  return { id: s.id, userId };
}

/** Import keeps ids: one that already exists in this database refuses the whole document. */
/** Refuses a document whose ids, or whose LangGraph thread for `userId`, the database holds already. */
function* refuseExisting(tx: Tx, doc: SessionExport, langgraph: PreparedLangGraph | undefined, userId: string): Step<void> {
  yield* refuseExistingIds(tx, doc);
  yield* refuseExistingThread(tx, langgraph, userId);
}

export function* refuseExistingIds(tx: Tx, doc: SessionExport): Step<void> {
  const taken = yield* tx.takenId({
    sessions: [doc.session.id],
    branches: doc.branches.map((b) => b.id),
    entries: doc.entries.map((e) => e.id),
    checkpoints: doc.checkpoints.map((c) => c.id),
  });
  if (taken) throw new ConflictError(`cannot import: id ${taken} already exists in this database (import keeps ids)`);
}
