// importSession: a session export written back, ids and times kept, owned by the given user, in one transaction.
// The document is untrusted: its links are checked, every hash and checksum is recomputed, and any id already in the
// database refuses the whole import. The world is not imported: nothing of the new session is applied, and its tool
// calls (which ran elsewhere, or were written by whoever made the document) are never replayed here.
import { ConflictError, IntegrityError, ValidationError } from "../models/errors.js";
import { parseInput, userScope } from "../models/inputs.js";
import { toJsonText } from "../models/json.js";
import { sessionExportSchema, type ExportedEntry, type SessionExport } from "../models/session-export.js";
import type { BranchRow, EntryRow, Store } from "../store/store.js";
import type { EngineContext, SessionRef } from "./context.js";
import { EMPTY_STATE_HASH, canonicalJson, checkpointChecksum, entryHash, portableChecksum, sha256, toolResultHash } from "./integrity.js";
import { entryAt, headOfEntry, type Head } from "./lineage.js";

const NO_STATE: Head = headOfEntry(undefined);

/** Payload texts serialized (and size-checked) before the transaction, as the stored columns hold them. */
interface PreparedEntry {
  doc: ExportedEntry;
  field: string;
  content: string | null;
  metadata: string | null;
  result: string | null;
  error: string | null;
}

export async function importSession(ctx: EngineContext, document: unknown, scope: unknown): Promise<SessionRef> {
  const doc = parseInput(sessionExportSchema, document, "document") as SessionExport;
  const { userId } = parseInput(userScope, scope, "importSession");
  const text = (value: unknown, field: string) => toJsonText(value, field, ctx.limits);
  const entries: PreparedEntry[] = doc.entries.map((e, i) => {
    const field = `document.entries[${i}]`;
    // A message's content (or a call's args) may be JSON null itself; only a state entry has none at all.
    if (e.kind === "state" && e.content !== null) throw new ValidationError(`${field}.content`, "a state entry has no content");
    if ((e.kind === "state") !== (e.state !== null)) throw new ValidationError(`${field}.state`, e.kind === "state" ? "is required for a state entry" : "only a state entry sets the state");
    if ((e.kind === "message") !== (e.role !== null)) throw new ValidationError(`${field}.role`, e.kind === "message" ? "is required for a message" : "only a message has a role");
    if ((e.kind === "tool") !== (e.tool !== null)) throw new ValidationError(`${field}.tool`, e.kind === "tool" ? "is required for a tool call" : "only a tool call names a tool");
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
  const states = doc.states.map((s, i) => {
    const body = canonicalJson(JSON.parse(text(s.value, `document.states[${i}].value`)));
    if (sha256(body) !== s.hash) throw new IntegrityError(`state ${s.hash} of the document does not match its hash`);
    return { hash: s.hash, body };
  });
  const sessionMetadata = doc.session.metadata === null ? null : text(doc.session.metadata, "document.session.metadata");
  const checkpointMetadata = doc.checkpoints.map((c, i) => (c.metadata === null ? null : text(c.metadata, `document.checkpoints[${i}].metadata`)));
  checkUniqueIds(doc);
  checkBranchLinks(doc);

  return ctx.store.write(() => {
    const store = ctx.store;
    refuseExistingIds(store, doc);
    const stateIds = new Map<string, number>();
    for (const s of states) stateIds.set(s.hash, store.snapshotId(s.hash) ?? store.insertSnapshot(s.hash, s.body));
    const stateOf = (hash: string | null, field: string): { id: number; hash: string } | null => {
      if (hash === null) return null;
      const id = stateIds.get(hash);
      if (id === undefined) throw new ValidationError(field, `state ${hash} is not among the document's states`);
      return { id, hash };
    };

    const s = doc.session;
    store.insertSession({
      id: s.id, userId, title: s.title, metadata: sessionMetadata, currentBranchId: s.currentBranchId,
      originSessionId: s.origin?.sessionId ?? null, originCheckpointId: s.origin?.checkpointId ?? null,
      createdAt: s.createdAt, updatedAt: s.updatedAt,
    });
    if (!doc.branches.some((b) => b.id === s.currentBranchId)) {
      throw new ValidationError("document.session.currentBranchId", `branch ${s.currentBranchId} is not among the document's branches`);
    }

    const byBranch = new Map<string, PreparedEntry[]>();
    for (const e of entries) {
      const list = byBranch.get(e.doc.branchId);
      if (list) list.push(e);
      else byBranch.set(e.doc.branchId, [e]);
    }
    const inserted = new Map<string, BranchRow>();
    let hasTools = false;
    doc.branches.forEach((b, i) => {
      const field = `document.branches[${i}]`;
      const parent = b.parentId === null ? null : inserted.get(b.parentId);
      if (i === 0 ? b.parentId !== null : !parent) {
        throw new ValidationError(`${field}.parentId`, i === 0 ? "the first branch must be the root (no parent)" : "must name a branch listed before it");
      }
      const row: BranchRow = { ...b, sessionId: s.id };
      let base: Head = NO_STATE;
      if (parent) {
        const anchor = entryAt(store, parent, b.forkPosition);
        if (b.forkPosition > 0 && !anchor) throw new ValidationError(`${field}.forkPosition`, `its parent's lineage has no entry at position ${b.forkPosition}`);
        if ((anchor?.id ?? null) !== b.forkEntryId) throw new ValidationError(`${field}.forkEntryId`, `is not the entry at position ${b.forkPosition} of its parent's lineage`);
        base = headOfEntry(anchor);
      } else if (b.forkPosition !== 0 || b.forkEntryId !== null) {
        throw new ValidationError(`${field}.forkPosition`, "the root branch starts at position 0");
      }
      store.insertBranch(row);
      inserted.set(b.id, row);
      let head = base;
      for (const e of (byBranch.get(b.id) ?? []).sort((x, y) => x.doc.position - y.doc.position)) {
        if (e.doc.position !== head.position + 1) throw new ValidationError(`${e.field}.position`, `expected position ${head.position + 1} on branch ${b.id}`);
        head = headOfEntry(writeImportedEntry(store, head, e, stateOf(e.doc.state, `${e.field}.state`)));
        if (e.doc.kind === "tool") {
          hasTools = true;
          store.insertImportedCall(e.doc.id, s.id);
        }
      }
      byBranch.delete(b.id);
    });
    const stray = byBranch.keys().next();
    if (!stray.done) throw new ValidationError("document.entries", `entries name branch ${stray.value}, which is not among the document's branches`);
    if (hasTools) store.markHasTools(s.id);

    doc.checkpoints.forEach((c, i) => {
      const field = `document.checkpoints[${i}]`;
      const branch = inserted.get(c.branchId);
      if (!branch) throw new ValidationError(`${field}.branchId`, `branch ${c.branchId} is not among the document's branches`);
      const anchor = entryAt(store, branch, c.position);
      if (c.position > 0 && !anchor) throw new ValidationError(`${field}.position`, `branch ${c.branchId} has no entry at position ${c.position}`);
      const head = headOfEntry(anchor);
      const state = stateOf(c.state, `${field}.state`);
      if (head.hash !== c.headHash || (state?.id ?? null) !== head.stateId) {
        throw new IntegrityError(`checkpoint ${c.id} of the document does not match the history it points at`);
      }
      const base = {
        id: c.id, sessionId: s.id, branchId: c.branchId, position: c.position, name: c.name, auto: c.auto,
        metadata: checkpointMetadata[i]!, userId, headHash: c.headHash, createdAt: c.createdAt, expiresAt: c.expiresAt,
      };
      const stateHash = state?.hash ?? EMPTY_STATE_HASH;
      if (portableChecksum(base, stateHash) !== c.checksum) throw new IntegrityError(`checkpoint ${c.id} of the document does not match its checksum`);
      // The stored checksum covers the owner: it is computed anew for the importing user.
      store.insertCheckpoint({ ...base, stateId: head.stateId, checksum: checkpointChecksum(base, stateHash) }, ctx.now());
    });
    doc.events.forEach((e, i) => {
      if (!inserted.has(e.branchId)) throw new ValidationError(`document.events[${i}].branchId`, `branch ${e.branchId} is not among the document's branches`);
      store.insertEvent({ sessionId: s.id, ...e });
    });
    return { id: s.id, userId };
  });
}

/** Inserts one entry after `head`, checking that the document's hashes are the ones its fields give. */
function writeImportedEntry(store: Store, head: Head, e: PreparedEntry, state: { id: number; hash: string } | null): EntryRow {
  const d = e.doc;
  const row = {
    id: d.id, branchId: d.branchId, position: d.position, kind: d.kind, role: d.role, content: e.content, tool: d.tool,
    callId: d.callId, clientId: d.clientId, metadata: e.metadata, stateId: state ? state.id : head.stateId,
    msgCount: head.msgCount + (d.kind === "message" ? 1 : 0), hash: d.hash, createdAt: d.createdAt,
  };
  if (entryHash(head.hash, row, state ? state.hash : null) !== d.hash) {
    throw new IntegrityError(`entry ${d.id} of the document does not match its hash`);
  }
  store.insertEntry(row);
  const c = d.completion;
  if (c) {
    const completion = { entryId: d.id, status: c.status, result: e.result, error: e.error, completedAt: c.completedAt };
    if (toolResultHash(d.hash, completion) !== c.hash) throw new IntegrityError(`the completion of tool call ${d.id} of the document does not match its hash`);
    store.insertToolResult({ ...completion, hash: c.hash });
  }
  return { ...row, seq: 0 };
}

/** Each branch is what it says: the root has no parent; a rollback's branch forks at its checkpoint; an edit's at none. */
function checkBranchLinks(doc: SessionExport): void {
  const checkpoints = new Map(doc.checkpoints.map((c) => [c.id, c]));
  doc.branches.forEach((b, i) => {
    const field = `document.branches[${i}]`;
    if ((b.reason === "root") !== (b.parentId === null)) throw new ValidationError(`${field}.reason`, "only the root branch has no parent, and it is the only \"root\"");
    if ((b.reason === "rollback") !== (b.forkCheckpointId !== null)) {
      throw new ValidationError(`${field}.forkCheckpointId`, "a rollback's branch, and only it, forks at a checkpoint");
    }
    if (b.forkCheckpointId === null) return;
    const cp = checkpoints.get(b.forkCheckpointId);
    if (!cp) throw new ValidationError(`${field}.forkCheckpointId`, `checkpoint ${b.forkCheckpointId} is not among the document's checkpoints`);
    if (cp.branchId !== b.parentId || cp.position !== b.forkPosition) {
      throw new ValidationError(`${field}.forkCheckpointId`, `checkpoint ${cp.id} is not at the branch's fork point (its parent, position ${b.forkPosition})`);
    }
  });
}

/** Ids must be unique within the document (the database would refuse them half-way otherwise). */
function checkUniqueIds(doc: SessionExport): void {
  for (const [list, field] of [[doc.branches, "branches"], [doc.entries, "entries"], [doc.checkpoints, "checkpoints"]] as const) {
    const seen = new Set<string>();
    list.forEach((x, i) => {
      if (seen.has(x.id)) throw new ValidationError(`document.${field}[${i}].id`, `id ${x.id} appears twice in the document`);
      seen.add(x.id);
    });
  }
}

/** Import keeps ids: one that already exists in this database refuses the whole document. */
function refuseExistingIds(store: Store, doc: SessionExport): void {
  const taken =
    (store.getSession(doc.session.id) && doc.session.id) ||
    doc.branches.find((b) => store.getBranch(b.id))?.id ||
    doc.entries.find((e) => store.getEntry(e.id))?.id ||
    doc.checkpoints.find((c) => store.getCheckpoint(c.id))?.id;
  if (taken) throw new ConflictError(`cannot import: id ${taken} already exists in this database (import keeps ids)`);
}
