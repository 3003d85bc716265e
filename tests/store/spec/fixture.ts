// Rows the store spec writes: sessions with a root branch, entries, checkpoints, and exact µs times.
import { createHash } from "node:crypto";
import type { BranchRow, NewCheckpoint, NewEntry, NewSession, Store } from "../../../src/store/port/index.js";

/** Times with µs fractions, as the engine makes them: a store reads them back exactly. */
export const T0 = 1732640000123.456;
export const at = (n: number) => T0 + n * 1000.001;
export const hex = (label: string) => createHash("sha256").update(label).digest("hex");

export const session = (id: string, userId: string, over: Partial<NewSession> = {}): NewSession => ({
  id,
  userId,
  title: null,
  metadata: null,
  currentBranchId: `${id}-b1`,
  originSessionId: null,
  originCheckpointId: null,
  createdAt: at(0),
  updatedAt: at(0),
  ...over,
});

export const rootBranch = (sessionId: string, over: Partial<BranchRow> = {}): BranchRow => ({
  id: `${sessionId}-b1`,
  sessionId,
  parentId: null,
  forkCheckpointId: null,
  forkPosition: 0,
  forkEntryId: null,
  name: null,
  reason: "root",
  createdAt: at(0),
  ...over,
});

/** Entry `position` of `branchId`: a message unless `over` says otherwise. */
export const entry = (branchId: string, position: number, over: Partial<NewEntry> = {}): NewEntry => ({
  id: `${branchId}-e${position}`,
  branchId,
  position,
  kind: "message",
  role: position % 2 ? "user" : "assistant",
  content: JSON.stringify({ text: `m${position}` }),
  tool: null,
  callId: null,
  clientId: null,
  metadata: null,
  stateId: null,
  msgCount: position,
  hash: hex(`${branchId}/${position}`),
  createdAt: at(10 + position),
  ...over,
});

export const checkpoint = (id: string, sessionId: string, position: number, over: Partial<NewCheckpoint> = {}): NewCheckpoint => ({
  id,
  sessionId,
  branchId: `${sessionId}-b1`,
  position,
  name: null,
  auto: false,
  metadata: null,
  userId: "alice",
  stateId: null,
  headHash: hex(`head ${id}`),
  checksum: hex(`sum ${id}`),
  createdAt: at(40),
  expiresAt: null,
  ...over,
});

/** A session of `userId` with its root branch and `messages` messages on it. */
export async function seed(store: Store, id: string, userId = "alice", messages = 0): Promise<void> {
  await store.write({ sessionId: id }, function* (tx) {
    yield* tx.insertSession(session(id, userId));
    yield* tx.insertBranch(rootBranch(id));
    for (let p = 1; p <= messages; p++) yield* tx.insertEntry(entry(`${id}-b1`, p));
  });
}
