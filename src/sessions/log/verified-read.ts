// Verified reads: a checkpoint's lineage read with its hash chain and checksum recomputed.
import { IntegrityError } from "../../models/errors.js";
import type { BranchRow, CheckpointAnchorRow, CheckpointRow, EntryRow, LineageSegment, Step, ToolRow, Tx } from "../../store/port/index.js";
import { commonPrefix, entryAt, lineageEntries, lineageTools } from "./lineage.js";
import { EMPTY_STATE_HASH, GENESIS_HASH, checkpointChecksum, entryHash, snapshotIntact, toolResultIntact } from "../integrity/hashes.js";

/** Where a verified chain ends: what the entries after it are chained onto. */
export interface ChainStart {
  position: number;
  hash: string;
  stateId: number | null;
}

export const GENESIS_START: ChainStart = { position: 0, hash: GENESIS_HASH, stateId: null };

/**
 * Recomputes the hash chain of `entries` and the checkpoint's checksum. `entries` are the lineage's positions after
 * `start` (a prefix the caller verified before; by default the whole lineage from position 1).
 */
export function* verifyCheckpoint(tx: Tx, cp: CheckpointRow, entries: EntryRow[], tools: ToolRow[], start = GENESIS_START): Step<void> {
  let hash = start.hash;
  const snapshotHashes = new Map<number, string>();
  const stateHash = (id: number) => cachedStateHash(id, snapshotHashes, tx);
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (e.position !== start.position + i + 1)
      throw new IntegrityError(`checkpoint ${cp.id}: history has a gap at position ${start.position + i + 1}`);
    const expected = entryHash(hash, e, e.kind === "state" && e.stateId !== null ? yield* stateHash(e.stateId) : null);
    if (expected !== e.hash)
      throw new IntegrityError(`checkpoint ${cp.id}: entry ${e.id} at position ${e.position} does not match its hash`);
    hash = e.hash;
  }
  if (start.position + entries.length !== cp.position || hash !== cp.headHash) {
    throw new IntegrityError(`checkpoint ${cp.id}: its history does not match the recorded hash chain`);
  }
  for (const t of tools) {
    if (!toolResultIntact(t)) throw new IntegrityError(`checkpoint ${cp.id}: the result of tool call ${t.id} does not match its hash`);
  }
  const last = entries[entries.length - 1];
  const stateId = last ? last.stateId : start.stateId;
  if (stateId !== cp.stateId) throw new IntegrityError(`checkpoint ${cp.id}: its state does not match its history`);
  const expected = checkpointChecksum(cp, stateId === null ? EMPTY_STATE_HASH : yield* stateHash(stateId));
  if (expected !== cp.checksum) throw new IntegrityError(`checkpoint ${cp.id}: checksum mismatch`);
}

function* cachedStateHash(id: number, snapshotHashes: Map<number, string>, tx: Tx): Step<string> {
  let h = snapshotHashes.get(id);
  if (h === undefined) {
    const snap = yield* tx.getSnapshot(id);
    if (!snap) throw new IntegrityError(`state snapshot ${id} is missing`);
    if (!snapshotIntact(snap)) throw new IntegrityError(`state snapshot ${id} does not match its hash`);
    h = snap.hash;
    snapshotHashes.set(id, h);
  }
  return h;
}

/**
 * The O(1) part of `verifyCheckpoint`, for moves that must not read the whole history: the checkpoint's own
 * checksum, its state snapshot, and the entry it points at (hash chained to its predecessor). `read` is what
 * `store.checkpointAnchor` returned for it.
 */
export function* verifyCheckpointAnchor(
  tx: Tx,
  cp: CheckpointRow,
  read: Omit<CheckpointAnchorRow, "checkpoint">,
): Step<{ branch: BranchRow; anchor: EntryRow | undefined }> {
  const branch = read.branch;
  if (!branch) throw new IntegrityError(`checkpoint ${cp.id}: its branch is missing`);
  let stateHash = EMPTY_STATE_HASH;
  if (cp.stateId !== null) {
    const snap = yield* tx.getSnapshot(cp.stateId);
    if (!snap || !snapshotIntact(snap)) throw new IntegrityError(`checkpoint ${cp.id}: its state snapshot does not match its hash`);
    stateHash = snap.hash;
  }
  if (checkpointChecksum(cp, stateHash) !== cp.checksum) throw new IntegrityError(`checkpoint ${cp.id}: checksum mismatch`);
  // Usually both the anchor and the entry before it are the branch's own, and came with `read`; else the lineage has them.
  const own = cp.position - 1 > branch.forkPosition;
  const anchor = own ? read.anchor : yield* entryAt(tx, branch, cp.position);
  const previousHash = own ? read.previousHash : (yield* entryAt(tx, branch, cp.position - 1))?.hash;
  if (!anchor) {
    if (cp.position !== 0 || cp.headHash !== GENESIS_HASH)
      throw new IntegrityError(`checkpoint ${cp.id}: the entry it points at is missing`);
    return { branch, anchor };
  }
  const anchorStateHash =
    anchor.kind === "state" && anchor.stateId !== null ? ((yield* tx.getSnapshot(anchor.stateId))?.hash ?? null) : null;
  if (
    anchor.hash !== cp.headHash ||
    anchor.stateId !== cp.stateId ||
    entryHash(previousHash ?? GENESIS_HASH, anchor, anchorStateHash) !== anchor.hash
  ) {
    throw new IntegrityError(`checkpoint ${cp.id}: the entry it points at does not match its hash`);
  }
  return { branch, anchor };
}

/** Reads a checkpoint's lineage and verifies it in full; returns what it read. */
export function* readVerified(tx: Tx, cp: CheckpointRow): Step<{ entries: EntryRow[]; tools: ToolRow[] }> {
  const entries = yield* lineageEntries(tx, cp.branchId, cp.position);
  const tools = yield* lineageTools(tx, cp.branchId, cp.position);
  yield* verifyCheckpoint(tx, cp, entries, tools);
  return { entries, tools };
}

/** What a verified chain needs of each entry to go on from it. */
export type ChainLink = Pick<EntryRow, "hash" | "stateId" | "msgCount">;

/** What a caller keeps of a lineage it read verified: its segments and, per entry, its chain link. */
export interface VerifiedLineage {
  segments: LineageSegment[];
  links: ChainLink[];
}

/** The lineage up to `position` of `branchId`: how many leading entries `known` already holds, and the entries after them. */
export function* readAfterKnown(
  tx: Tx,
  branchId: string,
  position: number,
  known?: VerifiedLineage,
): Step<{ shared: number; fresh: EntryRow[]; segments: LineageSegment[] }> {
  const segments = yield* tx.lineage(branchId, position);
  const shared = known ? commonPrefix(known.segments, segments, known.links.length, position) : 0;
  const fresh: EntryRow[] = [];
  for (const seg of segments) {
    if (seg.upTo > shared) for (const row of yield* tx.segmentEntries({ ...seg, after: Math.max(seg.after, shared) })) fresh.push(row);
  }
  return { shared, fresh, segments };
}

/**
 * `readVerified` for a caller that keeps what it verified before (`known`): entries are immutable, so those both
 * lineages share are neither read nor hashed again; the rest (`fresh`) are read and chained onto the shared
 * prefix's last hash, and the checkpoint's checksum, head hash and state are checked as always. A row changed on
 * disk after it was verified is not read again, and is caught by every full read (`restore`, `verify`, a new
 * process). Returns how many leading entries were known, the entries after them, and the lineage's segments.
 */
export function* readVerifiedAfter(
  tx: Tx,
  cp: CheckpointRow,
  known?: VerifiedLineage,
): Step<{ shared: number; fresh: EntryRow[]; segments: LineageSegment[] }> {
  const { shared, fresh, segments } = yield* readAfterKnown(tx, cp.branchId, cp.position, known);
  const last = shared > 0 ? known!.links[shared - 1]! : undefined;
  const start = last ? { position: shared, hash: last.hash, stateId: last.stateId } : GENESIS_START;
  yield* verifyCheckpoint(tx, cp, fresh, yield* lineageTools(tx, cp.branchId, cp.position), start);
  return { shared, fresh, segments };
}
