// verify: recompute every hash chain, tool completion, state snapshot and checkpoint checksum (like `git fsck`).
// An operator call over one session or the whole database; it reports problems instead of stopping at the first.
import { z } from "zod";
import { ForkpointError, NotFoundError, errorText } from "../models/errors.js";
import { idSchema, parseInput } from "../models/inputs.js";
import { longCallFields, type LongCallOptions } from "../models/progress.js";
import type { Step, Tx, BranchRow, CheckpointRow, EntryRow, Store, ToolRow } from "../store/port/index.js";
import { verifyCheckpointAnchor } from "./checkpoints.js";
import type { EngineContext } from "./context.js";
import { CHUNK_UNITS, LongCall, runSlices, type Slice } from "./long-call.js";
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

const verifyInput = z.strictObject({ sessionId: idSchema.optional(), ...longCallFields });

/** Options of `verify`: one session (default: the whole database), and the long-call options. */
export type VerifyOptions = { sessionId?: string } & LongCallOptions;

/**
 * Progress is counted in log entries and checkpoints of the sessions in scope, as they are when the call starts;
 * each chunk of them is read in its own read transaction. Entries never change and a tool call's completion is
 * written once, so the chunks check one history: the one counted at the start (what is added later is not checked;
 * a session deleted meanwhile is skipped). An abort rejects with `AbortedError`; nothing is written either way.
 */
export async function verify(ctx: EngineContext, input: VerifyOptions = {}): Promise<VerifyReport> {
  const o = parseInput(verifyInput, input, "verify");
  const call = new LongCall(o);
  const work = await ctx.store.read(function* (tx) {
    if (o.sessionId !== undefined && !(yield* tx.getSession(o.sessionId))) throw new NotFoundError("session", o.sessionId);
    const work: SessionWork[] = [];
    for (const id of o.sessionId !== undefined ? [o.sessionId] : yield* tx.allSessionIds()) work.push(yield* sessionWork(tx, id));
    return work;
  });
  call.start(work.reduce((n, w) => n + w.units, 0));
  const check: SessionCheck = { problems: [], snapshots: new Map() };
  const slices = function* () {
    for (const w of work) yield* sessionSlices(w, check);
  };
  await runSlices(call, slices(), (fn) => ctx.store.read(fn));
  await ctx.store.read(function* (tx) {
    // Checkpoints are found through their owner and session: one whose owner or session was changed is an orphan.
    for (const id of yield* tx.orphanCheckpointIds(o.sessionId)) {
      check.problems.push({ kind: "checkpoint", id, detail: "checkpoint belongs to no session of its user" });
    }
  });
  call.finish();
  return { ok: check.problems.length === 0, sessions: work.length, problems: check.problems };
}

/** One session's log and checkpoints as counted when a long call starts. */
export interface SessionWork {
  sessionId: string;
  userId: string;
  /** Each branch with the position its own entries are checked up to. */
  branches: { branch: BranchRow; upTo: number }[];
  checkpoints: CheckpointRow[];
  /** Entries plus checkpoints. */
  units: number;
}

/** Counts a session's work (inside the caller's read). */
export function* sessionWork(tx: Tx, sessionId: string): Step<SessionWork> {
  const session = (yield* tx.getSession(sessionId))!;
  const heads = yield* tx.branchHeads(sessionId);
  const branches = (yield* tx.listBranches(sessionId)).map((branch) => ({
    branch,
    upTo: Math.max(branch.forkPosition, heads.get(branch.id) ?? 0),
  }));
  const checkpoints = yield* tx.sessionCheckpoints(session.userId, sessionId);
  const units = branches.reduce((n, b) => n + b.upTo - b.branch.forkPosition, checkpoints.length);
  return { sessionId, userId: session.userId, branches, checkpoints, units };
}

/** A chunk of a branch's own entries, with their tool calls, as read. */
export interface LogChunk {
  branch: BranchRow;
  entries: EntryRow[];
  tools: ToolRow[];
}

/** What checking sessions accumulates; `onChunk` sees each chunk of a log as read (export builds its document so). */
export interface SessionCheck {
  problems: VerifyProblem[];
  snapshots: Map<number, string | null>;
  onChunk?: (tx: Tx, chunk: LogChunk) => Step<void>;
}

/**
 * The checks of one session as slices (see `runSlices`): each branch's own entries chained from its fork entry in
 * chunks (every entry is checked once, however deep the tree), then each checkpoint. A session deleted meanwhile is
 * left alone from then on; a checkpoint deleted meanwhile is not checked.
 */
export function* sessionSlices(work: SessionWork, check: SessionCheck): Generator<Slice> {
  const problems = check.problems;
  let gone = false;
  const alive = function* (tx: Tx): Step<boolean> {
    if (!gone) gone = (yield* tx.getSession(work.sessionId)) === undefined;
    return !gone;
  };
  for (const { branch, upTo } of work.branches) {
    let previous = GENESIS_HASH;
    let position = branch.forkPosition;
    let broken = false;
    yield {
      units: 0,
      run: function* (tx) {
        if (!(yield* alive(tx))) return;
        const base = branch.forkEntryId ? yield* tx.getEntry(branch.forkEntryId) : undefined;
        if (branch.forkEntryId && !base) {
          problems.push({ kind: "branch", id: branch.id, detail: `its fork entry ${branch.forkEntryId} is missing` });
          broken = true;
          return;
        }
        if (branch.forkCheckpointId && !(yield* tx.getCheckpoint(branch.forkCheckpointId))) {
          problems.push({ kind: "branch", id: branch.id, detail: `the checkpoint it forks from (${branch.forkCheckpointId}) is missing` });
        }
        previous = base?.hash ?? GENESIS_HASH;
      },
    };
    for (let after = branch.forkPosition; after < upTo; after += CHUNK_UNITS) {
      const segment = { branchId: branch.id, after, upTo: Math.min(upTo, after + CHUNK_UNITS) };
      yield {
        units: segment.upTo - after,
        run: function* (tx) {
          if (broken || !(yield* alive(tx))) return;
          const entries = yield* tx.segmentEntries(segment);
          for (const e of entries) {
            if (e.position !== ++position) {
              problems.push({ kind: "branch", id: branch.id, detail: `its log has a gap before position ${e.position}` });
              position = e.position;
            }
            const stateHash =
              e.kind === "state" && e.stateId !== null ? yield* snapshotHash(tx, e.stateId, problems, check.snapshots) : null;
            if (entryHash(previous, e, stateHash) !== e.hash)
              problems.push({ kind: "entry", id: e.id, detail: `entry at position ${e.position} does not match its hash` });
            previous = e.hash;
          }
          const tools = yield* tx.segmentTools(segment);
          for (const t of tools) {
            if (!toolResultIntact(t))
              problems.push({ kind: "tool-result", id: t.id, detail: "tool call's completion does not match its hash" });
          }
          if (check.onChunk) yield* check.onChunk(tx, { branch, entries, tools });
        },
      };
    }
  }
  for (const counted of work.checkpoints) {
    yield {
      units: 1,
      run: function* (tx) {
        const cp = (yield* alive(tx)) ? yield* tx.getCheckpoint(counted.id) : undefined;
        if (!cp) return;
        for (const detail of yield* checkpointFilesProblems(tx, cp.id)) problems.push({ kind: "checkpoint", id: cp.id, detail });
        try {
          yield* verifyCheckpointAnchor(tx, cp, (yield* tx.checkpointAnchor(cp.id))!);
        } catch (error) {
          if (!(error instanceof ForkpointError)) throw error;
          problems.push({ kind: "checkpoint", id: cp.id, detail: errorText(error) });
        }
      },
    };
  }
}

/** The snapshot's hash when its body matches it, else null (reported once). */
function* snapshotHash(tx: Tx, id: number, problems: VerifyProblem[], seen: Map<number, string | null>): Step<string | null> {
  if (seen.has(id)) return seen.get(id)!;
  const snap = yield* tx.getSnapshot(id);
  let hash: string | null = null;
  if (!snap) problems.push({ kind: "state", id: String(id), detail: "state snapshot is missing" });
  else if (!snapshotIntact(snap)) problems.push({ kind: "state", id: String(id), detail: "state snapshot does not match its hash" });
  else hash = snap.hash;
  seen.set(id, hash);
  return hash;
}
