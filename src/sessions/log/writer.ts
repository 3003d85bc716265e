// The writes everything else is built from: chaining entries onto a head (messages with their automatic checkpoints),
// and taking a checkpoint at a head. All run inside a caller's write transaction.
import { newId, type IdKind } from "../../models/ids.js";
import type { Checkpoint, Message } from "../../models/types.js";
import type { CheckpointRequest, CheckpointRow, EntryKind, EntryRow, Step, Tx } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { toCheckpoint, toMessage } from "../core/rows.js";
import { EMPTY_STATE_HASH, checkpointChecksum, entryHash } from "../integrity/hashes.js";
import { headOfEntry, type Head } from "../core/head.js";
import { storeSnapshot } from "./snapshots.js";
import { retainAfterWrite } from "./retention.js";
import { blockMayNote, noteBlockBranch, noteBlockRequest } from "../core/block-scope.js";

export interface EntryFields {
  kind: EntryKind;
  role?: string | null;
  content?: string | null;
  tool?: string | null;
  callId?: string | null;
  /** For tool entries: whether the tool had an `undo` when journaled (null: not known). */
  reversible?: boolean | null;
  clientId?: string | null;
  metadata?: string | null;
  /** For state entries: the new snapshot's id and hash. */
  state?: { id: number; hash: string };
}

const ID_KIND: Record<EntryKind, IdKind> = { message: "msg", state: "st", tool: "tc" };

/** Appends one entry after `head` on `branchId`; returns the stored row. */
export function* writeEntry(
  ctx: EngineContext,
  tx: Tx,
  branchId: string,
  head: Head,
  fields: EntryFields,
  id = newId(ID_KIND[fields.kind]),
): Step<EntryRow> {
  const row: EntryRow = {
    seq: 0,
    id,
    branchId,
    position: head.position + 1,
    kind: fields.kind,
    role: fields.role ?? null,
    content: fields.content ?? null,
    tool: fields.tool ?? null,
    callId: fields.callId ?? null,
    reversible: fields.reversible ?? null,
    clientId: fields.clientId ?? null,
    metadata: fields.metadata ?? null,
    stateId: fields.state ? fields.state.id : head.stateId,
    msgCount: head.msgCount + (fields.kind === "message" ? 1 : 0),
    hash: "",
    // Hashed, so settled first: never before the head's, whatever another writer's clock says.
    createdAt: Math.max(ctx.now(), head.createdAt),
  };
  row.hash = entryHash(head.hash, row, fields.state ? fields.state.hash : null);
  yield* tx.insertEntry(row);
  noteBlockBranch(ctx.events, branchId, head.position);
  return row;
}

export function* stateHashOf(tx: Tx, stateId: number | null): Step<string> {
  if (stateId === null) return EMPTY_STATE_HASH;
  return (yield* tx.getSnapshot(stateId))!.hash;
}

/** The metadata of the entry that records a checkpoint's capture of the workspace's files (see `writeCaptureEntry`). */
const CAPTURE_METADATA = JSON.stringify({ forkpoint: "files" });

/**
 * Records a capture of the workspace's files as an entry of the log: a state entry that keeps the state as it is, so
 * the checkpoint taken after it has a position of its own (a session that writes no messages, as an MCP client's, still
 * gets one point per checkpoint for a rollback to fork from and for undo and redo to cross). Returns the new head.
 */
export function* writeCaptureEntry(ctx: EngineContext, tx: Tx, branchId: string, head: Head): Step<Head> {
  // A state entry always points at a snapshot (exports carry its hash): `{}` is stored once when none was set yet.
  const state =
    head.stateId === null ? yield* storeSnapshot(ctx, tx, {}) : { id: head.stateId, hash: yield* stateHashOf(tx, head.stateId) };
  return headOfEntry(yield* writeEntry(ctx, tx, branchId, head, { kind: "state", state, metadata: CAPTURE_METADATA }));
}

export interface CheckpointFields {
  name: string | null;
  auto: boolean;
  metadata: string | null;
  /**
   * Its time to live (ms), or none. The expiry is counted from the checkpoint's `createdAt`, which may be later than
   * this process's clock reads (it is never before the session's newest checkpoint's): a TTL is never shortened.
   */
  expiresIn?: number | undefined;
  /** The request that makes it (a turn's), kept on its row: a taken id fails the unit (`RequestTakenError`). */
  request?: CheckpointRequest | undefined;
}

/** Who a checkpoint belongs to, with the time of the session's newest checkpoint when the caller read it already. */
export interface CheckpointSession {
  id: string;
  userId: string;
  lastCheckpointAt?: number;
}

/**
 * Records a checkpoint at `head` of `branchId`: O(1), nothing of the history is copied. Its time is never before the
 * session's newest checkpoint's (the timeline walks them by seq); `session.lastCheckpointAt` is kept for the next one.
 */
export function* writeCheckpoint(
  ctx: EngineContext,
  tx: Tx,
  session: CheckpointSession,
  branchId: string,
  head: Head,
  fields: CheckpointFields,
): Step<CheckpointRow> {
  const createdAt = Math.max(ctx.now(), session.lastCheckpointAt ?? (yield* tx.lastCheckpointAt(session.userId, session.id)));
  const row: CheckpointRow = {
    seq: 0,
    id: newId("cp"),
    sessionId: session.id,
    branchId,
    position: head.position,
    name: fields.name,
    auto: fields.auto,
    metadata: fields.metadata,
    userId: session.userId,
    headHash: head.hash,
    createdAt,
    expiresAt: fields.expiresIn === undefined ? null : createdAt + fields.expiresIn,
    stateId: head.stateId,
    checksum: "",
  };
  row.checksum = checkpointChecksum(row, yield* stateHashOf(tx, head.stateId));
  const note = !!fields.request && (yield* blockMayNote(ctx.events, tx, session.id, fields.request.id));
  yield* tx.insertCheckpoint(fields.request ? { ...row, request: fields.request } : row, row.createdAt);
  if (note) noteBlockRequest(ctx.events, session.id, fields.request!.id);
  session.lastCheckpointAt = row.createdAt;
  return row;
}

/** Appends message entries after `head`, each followed by the auto checkpoint the policy asks for. */
export function* writeMessages(
  ctx: EngineContext,
  tx: Tx,
  session: CheckpointSession,
  branchId: string,
  head: Head,
  fields: EntryFields[],
): Step<{ head: Head; messages: Message[]; checkpoints: Checkpoint[]; rows: EntryRow[] }> {
  const messages: Message[] = [];
  const checkpoints: Checkpoint[] = [];
  const rows: EntryRow[] = [];
  for (const f of fields) {
    const row = yield* writeEntry(ctx, tx, branchId, head, f);
    head = headOfEntry(row);
    rows.push(row);
    messages.push(toMessage(row));
    const auto = yield* autoCheckpointAfterMessage(ctx, tx, session, row);
    if (auto) checkpoints.push(toCheckpoint(auto));
  }
  return { head, messages, checkpoints, rows };
}

/** Applies the `everyMessages` policy after `entry`: a checkpoint when the message count reaches a multiple of N. */
export function* autoCheckpointAfterMessage(
  ctx: EngineContext,
  tx: Tx,
  session: CheckpointSession,
  entry: EntryRow,
): Step<CheckpointRow | undefined> {
  const every = ctx.autoCheckpoint.everyMessages;
  if (!every || entry.kind !== "message" || entry.msgCount % every !== 0) return undefined;
  const row = yield* writeCheckpoint(ctx, tx, session, entry.branchId, headOfEntry(entry), { name: null, auto: true, metadata: null });
  yield* retainAfterWrite(tx, session, row, row.createdAt);
  return row;
}
