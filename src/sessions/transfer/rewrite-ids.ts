// A session export with every id made anew (session, branches, entries, checkpoints), its hash chain recomputed to match.
import { newId, type IdKind } from "../../models/ids.js";
import type { ExportedEntry, SessionExport } from "../../models/session-export.js";
import { GENESIS_HASH, entryHash, portableChecksum, toolResultHash, EMPTY_STATE_HASH } from "../integrity/hashes.js";
import { remapEntryRefs } from "../entry-refs.js";

// The texts an import stores and hashes (see importSession): a message's content, a call's args and a succeeded call's
// result are JSON text even when they are JSON null; only metadata (and a state entry's content) may be absent.
const text = (value: unknown): string => JSON.stringify(value);
const orAbsent = (value: unknown): string | null => (value === null ? null : text(value));

/**
 * The same session under new ids: entries chain as in the original (same contents, states and times), so every hash
 * is recomputed over the new ids, as are checkpoints' head hashes and checksums. Events keep their kind and times, and
 * point at the new ids where they named one of the session's own. `sessionId` is the copy's id.
 */
export function rewriteIds(doc: SessionExport, sessionId: string, createdAt: number): SessionExport {
  const ids = new Map<string, string>([[doc.session.id, sessionId]]);
  const fresh = (old: string, fallback: IdKind): string => {
    const prefix = old.split("_")[0] as IdKind;
    const id = newId(["br", "msg", "st", "tc", "cp"].includes(prefix) ? prefix : fallback);
    ids.set(old, id);
    return id;
  };
  for (const b of doc.branches) fresh(b.id, "br");
  for (const e of doc.entries) fresh(e.id, "msg");
  for (const c of doc.checkpoints) fresh(c.id, "cp");
  const to = (old: string): string => ids.get(old)!;
  const orNull = (old: string | null): string | null => (old === null ? null : to(old));

  // An entry's chain continues from the entry before it in its lineage: its branch's previous one, or the fork entry.
  const hashOf = new Map<string, string>();
  const byBranch = new Map<string, ExportedEntry[]>();
  for (const e of doc.entries) {
    const list = byBranch.get(e.branchId);
    if (list) list.push(e);
    else byBranch.set(e.branchId, [e]);
  }
  const entries: ExportedEntry[] = [];
  for (const b of doc.branches) {
    let previous = b.forkEntryId === null ? GENESIS_HASH : hashOf.get(b.forkEntryId)!;
    for (const e of (byBranch.get(b.id) ?? []).sort((x, y) => x.position - y.position)) {
      // Metadata naming an entry (a later form of an answer names the one before it) names the copy's.
      const moved = { ...e, id: to(e.id), branchId: to(e.branchId), metadata: remapEntryRefs(e.metadata, (id) => ids.get(id)) };
      const hash = entryHash(
        previous,
        { ...moved, content: e.kind === "state" ? null : text(e.content), metadata: orAbsent(moved.metadata) },
        e.state,
      );
      const c = e.completion;
      const completion = c && {
        ...c,
        hash: toolResultHash(hash, {
          entryId: moved.id,
          status: c.status,
          result: c.status === "succeeded" ? text(c.result) : null,
          error: c.status === "failed" ? text(c.error) : null,
          completedAt: c.completedAt,
        }),
      };
      hashOf.set(e.id, hash);
      entries.push({ ...moved, hash, completion });
      previous = hash;
    }
  }
  // Entries in the document's own order (a branch's, then the next's), as an export lists them.
  const order = new Map(doc.entries.map((e, i) => [to(e.id), i]));
  entries.sort((x, y) => order.get(x.id)! - order.get(y.id)!);

  const oldHashes = new Map(doc.entries.map((e) => [e.hash, hashOf.get(e.id)!]));
  const checkpoints = doc.checkpoints.map((c) => {
    const moved = {
      ...c,
      id: to(c.id),
      branchId: to(c.branchId),
      headHash: c.headHash === GENESIS_HASH ? GENESIS_HASH : oldHashes.get(c.headHash)!,
    };
    const fields = { ...moved, sessionId, metadata: orAbsent(moved.metadata), userId: "" };
    return { ...moved, checksum: portableChecksum(fields, c.state ?? EMPTY_STATE_HASH) };
  });
  return {
    ...doc,
    session: { ...doc.session, id: sessionId, currentBranchId: to(doc.session.currentBranchId), createdAt, updatedAt: createdAt },
    branches: doc.branches.map((b) => ({
      ...b,
      id: to(b.id),
      parentId: orNull(b.parentId),
      forkCheckpointId: orNull(b.forkCheckpointId),
      forkEntryId: orNull(b.forkEntryId),
      ...(b.continuedBy !== undefined ? { continuedBy: to(b.continuedBy) } : {}),
    })),
    entries,
    checkpoints,
    events: doc.events.map((e) => ({ ...e, refId: ids.get(e.refId) ?? e.refId, branchId: ids.get(e.branchId) ?? e.branchId })),
  };
}
