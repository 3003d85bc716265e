// verify: recompute every hash chain, tool completion, state snapshot and checkpoint checksum (like `git fsck`).
// An operator call over one session or the whole database; it reports problems instead of stopping at the first.
import { z } from "zod";
import { ForkpointError, NotFoundError, errorText } from "../models/errors.js";
import { idSchema, parseInput } from "../models/inputs.js";
import type { Store } from "../store/store.js";
import { verifyCheckpointAnchor } from "./checkpoints.js";
import type { EngineContext } from "./context.js";
import { GENESIS_HASH, entryHash, snapshotIntact, toolResultIntact } from "./integrity.js";
import { checkpointFilesProblems } from "./workspace.js";

/** One thing `verify` found wrong. */
export interface VerifyProblem {
  /** What is damaged: "entry", "tool-result", "state", "checkpoint" or "branch". */
  kind: "entry" | "tool-result" | "state" | "checkpoint" | "branch";
  /** The id of the damaged row (a snapshot's numeric id as text for "state"). */
  id: string;
  detail: string;
}

/** What `verify` returns: `ok` when nothing is wrong. */
export interface VerifyReport {
  ok: boolean;
  /** Sessions checked. */
  sessions: number;
  problems: VerifyProblem[];
}

const verifyInput = z.strictObject({ sessionId: idSchema.optional() });

export async function verify(ctx: EngineContext, input: { sessionId?: string } = {}): Promise<VerifyReport> {
  const o = parseInput(verifyInput, input, "verify");
  return ctx.store.read(() => {
    const store = ctx.store;
    if (o.sessionId !== undefined && !store.getSession(o.sessionId)) throw new NotFoundError("session", o.sessionId);
    const sessionIds = o.sessionId !== undefined ? [o.sessionId] : store.allSessionIds();
    const problems: VerifyProblem[] = [];
    const snapshots = new Map<number, string | null>();
    for (const sessionId of sessionIds) verifySession(store, sessionId, problems, snapshots);
    // Checkpoints are found through their owner and session: one whose owner or session was changed is an orphan.
    for (const id of store.orphanCheckpointIds(o.sessionId)) {
      problems.push({ kind: "checkpoint", id, detail: "checkpoint belongs to no session of its user" });
    }
    return { ok: problems.length === 0, sessions: sessionIds.length, problems };
  });
}

/** The snapshot's hash when its body matches it, else null (reported once). */
function snapshotHash(store: Store, id: number, problems: VerifyProblem[], seen: Map<number, string | null>): string | null {
  if (seen.has(id)) return seen.get(id)!;
  const snap = store.getSnapshot(id);
  let hash: string | null = null;
  if (!snap) problems.push({ kind: "state", id: String(id), detail: "state snapshot is missing" });
  else if (!snapshotIntact(snap)) problems.push({ kind: "state", id: String(id), detail: "state snapshot does not match its hash" });
  else hash = snap.hash;
  seen.set(id, hash);
  return hash;
}

/** The problems of one session (reads only; runs inside the caller's unit of work). */
export function verifySessionProblems(store: Store, sessionId: string): VerifyProblem[] {
  const problems: VerifyProblem[] = [];
  verifySession(store, sessionId, problems, new Map());
  return problems;
}

function verifySession(store: Store, sessionId: string, problems: VerifyProblem[], snapshots: Map<number, string | null>): void {
  // Each branch's own entries chain from its fork entry: every entry is checked once, however deep the tree.
  for (const branch of store.listBranches(sessionId)) {
    const base = branch.forkEntryId ? store.getEntry(branch.forkEntryId) : undefined;
    if (branch.forkEntryId && !base) {
      problems.push({ kind: "branch", id: branch.id, detail: `its fork entry ${branch.forkEntryId} is missing` });
      continue;
    }
    if (branch.forkCheckpointId && !store.getCheckpoint(branch.forkCheckpointId)) {
      problems.push({ kind: "branch", id: branch.id, detail: `the checkpoint it forks from (${branch.forkCheckpointId}) is missing` });
    }
    let previous = base?.hash ?? GENESIS_HASH;
    let position = branch.forkPosition;
    const segment = { branchId: branch.id, after: branch.forkPosition, upTo: Number.MAX_SAFE_INTEGER };
    for (const e of store.segmentEntries(segment)) {
      if (e.position !== ++position) {
        problems.push({ kind: "branch", id: branch.id, detail: `its log has a gap before position ${e.position}` });
        position = e.position;
      }
      const stateHash = e.kind === "state" && e.stateId !== null ? snapshotHash(store, e.stateId, problems, snapshots) : null;
      if (entryHash(previous, e, stateHash) !== e.hash) problems.push({ kind: "entry", id: e.id, detail: `entry at position ${e.position} does not match its hash` });
      previous = e.hash;
    }
    for (const t of store.segmentTools(segment)) {
      if (!toolResultIntact(t)) problems.push({ kind: "tool-result", id: t.id, detail: "tool call's completion does not match its hash" });
    }
  }
  for (const cp of store.sessionCheckpoints(store.getSession(sessionId)!.userId, sessionId)) {
    for (const detail of checkpointFilesProblems(store, cp.id)) problems.push({ kind: "checkpoint", id: cp.id, detail });
    try {
      verifyCheckpointAnchor(store, cp, store.checkpointAnchor(cp.id)!);
    } catch (error) {
      if (!(error instanceof ForkpointError)) throw error;
      problems.push({ kind: "checkpoint", id: cp.id, detail: errorText(error) });
    }
  }
}
