// The guarded blocks (atomic) a call runs inside, and what each block's own writes and moves did: the branches they
// landed on or made, their changes to the move stack, and the request ids they recorded. A failed block continues
// those branches, takes those changes back and forgets those requests, not another opener's.
import { AsyncLocalStorage } from "node:async_hooks";
import type { MoveStack, Step, Tx } from "../../store/port/index.js";

/** One change a block's own move made to the session's move stack (undo and redo walk it). */
export interface StackChange {
  before: MoveStack;
  after: MoveStack;
}

/** What a block's own calls did, as its rollback needs it. */
export interface BlockOwn {
  branches: ReadonlySet<string>;
  /** In the order they were made. */
  stack: readonly StackChange[];
  /** By session, the request ids of the writes its rollback takes back (a retry after it failed applies them again). */
  requests: ReadonlyMap<string, ReadonlySet<string>>;
  /**
   * Each written branch's head position before the block's first write there; none for a branch the block made (there
   * was no conversation on it before the block).
   */
  starts: ReadonlyMap<string, number>;
}

/** One running block: its handle's owner (a handle's event emitter), and what its own calls did. */
interface BlockFrame {
  owner: object;
  branches: Set<string>;
  stack: StackChange[];
  starts: Map<string, number>;
  /** The branches its own moves made. */
  made: Set<string>;
  requests: Map<string, Set<string>>;
}

const blocks = new AsyncLocalStorage<readonly BlockFrame[]>();
/** The request ids a write's units recorded, noted once the write committed (see `committedNotes`). */
const pending = new AsyncLocalStorage<Array<[sessionId: string, requestId: string]>>();

/** Runs `run` as a guarded block of `owner`; it gets what its own writes and moves fill in (an inner block's too). */
export function inBlock<T>(owner: object, run: (own: BlockOwn) => Promise<T>): Promise<T> {
  const frame: BlockFrame = { owner, branches: new Set(), stack: [], requests: new Map(), starts: new Map(), made: new Set() };
  return blocks.run([...(blocks.getStore() ?? []), frame], () => run(frame));
}

/**
 * In the unit that records request `requestId` of session `sessionId`, before its record: whether the blocks of
 * `owner` this call runs inside may take it as their own. An id the session holds already (recorded before the block,
 * or by another opener) is not the block's: the unit is refused, and that record stays.
 */
export function* blockMayNote(owner: object, tx: Tx, sessionId: string, requestId: string): Step<boolean> {
  if (!inBlockOf(owner)) return false;
  return !(yield* tx.getRequest(sessionId, requestId));
}

/**
 * After the unit's record of request `requestId` of session `sessionId` was written: notes it, in every block of
 * `owner` this call runs inside, as the block's own, which a failed block's rollback forgets (a retry runs it again).
 * Only ids of writes the rollback takes back are noted: a write that stays (a call left applied for want of an undo,
 * a deleted checkpoint, a title) keeps its id, so a retry answers from it.
 */
export function noteBlockRequest(owner: object, sessionId: string, requestId: string): void {
  const notes = pending.getStore();
  if (notes) notes.push([sessionId, requestId]);
  else noteInFrames(owner, sessionId, requestId);
}

/**
 * Runs `write` (a call recording a request): the ids its units noted become the blocks' own once it committed. A unit
 * refused at COMMIT (another opener's record of the id won), or run again and refused then, leaves no note: a failed
 * block's rollback must not forget that other record.
 */
export async function committedNotes<T>(owner: object, write: () => Promise<T>): Promise<T> {
  if (!inBlockOf(owner)) return write();
  const notes: Array<[string, string]> = [];
  const value = await pending.run(notes, write);
  for (const [sessionId, requestId] of notes) noteInFrames(owner, sessionId, requestId);
  return value;
}

function noteInFrames(owner: object, sessionId: string, requestId: string): void {
  for (const frame of blocks.getStore() ?? [])
    if (frame.owner === owner) {
      const ids = frame.requests.get(sessionId) ?? new Set<string>();
      frame.requests.set(sessionId, ids.add(requestId));
    }
}

/** After a rollback forgot `requestIds` of `sessionId`: no block of `owner` this call runs inside holds them still. */
export function dropBlockRequests(owner: object, sessionId: string, requestIds: readonly string[]): void {
  for (const frame of blocks.getStore() ?? [])
    if (frame.owner === owner) for (const id of requestIds) frame.requests.get(sessionId)?.delete(id);
}

/**
 * Notes, in every block of `owner` this call runs inside, that the call wrote on or made `branchId`; `head`: the
 * branch's head position before the call's write (kept from the block's first write there), none when the call made it.
 */
export function noteBlockBranch(owner: object, branchId: string, head?: number): void {
  for (const frame of blocks.getStore() ?? [])
    if (frame.owner === owner) {
      frame.branches.add(branchId);
      if (head === undefined) frame.made.add(branchId);
      else if (!frame.made.has(branchId) && !frame.starts.has(branchId)) frame.starts.set(branchId, head);
    }
}

/** True when this call runs inside a block of `owner`. */
export function inBlockOf(owner: object): boolean {
  return (blocks.getStore() ?? []).some((frame) => frame.owner === owner);
}

/** Notes, in every block of `owner` this call runs inside, a change the call made to the move stack. */
export function noteBlockStack(owner: object, change: StackChange): void {
  for (const frame of blocks.getStore() ?? []) if (frame.owner === owner) frame.stack.push(change);
}
