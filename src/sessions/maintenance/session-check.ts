// The checks of one session as slices of a long call: every hash chain, completion, snapshot and checkpoint (with the
// metadata index rows it is listed by).
import { ForkpointError, errorText } from "../../models/errors.js";
import type { BranchRow, CheckpointRow, EntryRow, IndexedMetadataRow, Step, ToolRow, Tx } from "../../store/port/index.js";
import { MAX_INDEXED_METADATA, indexedMetadata } from "../../store/port/index.js";
import { GENESIS_HASH, entryHash, snapshotIntact, toolResultIntact } from "../integrity/hashes.js";
import { verifyCheckpointAnchor } from "../log/verified-read.js";
import { checkpointFilesProblems, type FilesSeen } from "../workspace/verify-files.js";
import { CHUNK_UNITS, type Slice } from "./long-call.js";
import { treeProblems } from "./tree-problems.js";

/** One thing `verify` found wrong. */
export interface VerifyProblem {
  /** What is damaged: "entry", "tool-result", "state", "checkpoint" or "branch". */
  kind: "entry" | "tool-result" | "state" | "checkpoint" | "branch";
  /** The id of the damaged row (a snapshot's numeric id as text for "state"). */
  id: string;
  detail: string;
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
  /** What is wrong with the branch tree's rows (a cycle, a current branch of another session). */
  treeProblems: VerifyProblem[];
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
  const tree = treeProblems(
    session,
    branches.map((b) => b.branch),
  );
  return { sessionId, userId: session.userId, branches, checkpoints, units, treeProblems: tree };
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
  /**
   * Whether each checkpoint's metadata index rows are checked too (verify's). Export leaves them: they are made from
   * the metadata it carries, and an import makes them again.
   */
  metadataIndex?: boolean;
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
  problems.push(...work.treeProblems);
  for (const { branch, upTo } of work.branches) {
    let previous = GENESIS_HASH;
    let messages = 0;
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
        messages = base?.msgCount ?? 0;
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
            // msg_count is not hashed: it is the lineage's messages up to the entry, what listings report.
            if (e.kind === "message") messages++;
            if (e.msgCount !== messages) {
              problems.push({
                kind: "entry",
                id: e.id,
                detail: `entry at position ${e.position} counts ${e.msgCount} messages, not ${messages}`,
              });
              messages = e.msgCount;
            }
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
  // Snapshots share most of their trees and contents: each is checked once per session.
  const filesSeen: FilesSeen = { trees: new Map(), contents: new Map() };
  for (const counted of work.checkpoints) {
    yield { units: 1, run: (tx) => runUnit(tx, alive, counted, check, filesSeen) };
  }
}

function* runUnit(tx: Tx, alive: (tx: Tx) => Step<boolean>, counted: CheckpointRow, check: SessionCheck, filesSeen: FilesSeen) {
  const problems = check.problems;
  const cp = (yield* alive(tx)) ? yield* tx.getCheckpoint(counted.id) : undefined;
  if (!cp) return;
  for (const detail of yield* checkpointFilesProblems(tx, cp.id, filesSeen)) problems.push({ kind: "checkpoint", id: cp.id, detail });
  try {
    yield* verifyCheckpointAnchor(tx, cp, (yield* tx.checkpointAnchor(cp.id))!);
  } catch (error) {
    if (!(error instanceof ForkpointError)) throw error;
    problems.push({ kind: "checkpoint", id: cp.id, detail: errorText(error) });
    return;
  }
  if (!check.metadataIndex) return;
  // Its metadata matched the checksum: the index rows `listCheckpoints({ metadata })` finds it by are made from it.
  const detail = metadataIndexProblem(cp, yield* tx.checkpointMetadataRows(cp.seq));
  if (detail) problems.push({ kind: "checkpoint", id: cp.id, detail });
}

/**
 * What is wrong with a checkpoint's metadata index rows, given its (verified) metadata: a row its metadata makes that
 * is missing (a filter on it misses the checkpoint), or one a filter can reach that its metadata does not make (a
 * filter finds it for a value it does not have). Rows no filter reaches (a migration's backfill may have written a
 * few the code leaves out: see `indexedMetadata`) are not damage.
 */
export function metadataIndexProblem(cp: CheckpointRow, rows: readonly IndexedMetadataRow[]): string | undefined {
  const made = new Set(indexedMetadata(cp.metadata).map(([key, value]) => JSON.stringify([cp.userId, key, value])));
  const found = new Set(rows.map((r) => JSON.stringify([r.userId, r.key, r.value])));
  const missing = [...made].filter((row) => !found.has(row));
  const reachable = (r: IndexedMetadataRow) =>
    r.key.length <= MAX_INDEXED_METADATA && r.value.length <= MAX_INDEXED_METADATA && !r.key.includes("\0");
  const extra = rows.filter((r) => reachable(r) && !made.has(JSON.stringify([r.userId, r.key, r.value])));
  if (missing.length === 0 && extra.length === 0) return undefined;
  const keys = (list: string[]) => [...new Set(list)].map((k) => JSON.stringify(k)).join(", ");
  const parts = [
    ...(missing.length ? [`lacks ${keys(missing.map((row) => (JSON.parse(row) as string[])[1]!))}`] : []),
    ...(extra.length ? [`has rows its metadata does not make for ${keys(extra.map((r) => r.key))}`] : []),
  ];
  return `its metadata index does not match its metadata (${parts.join("; ")}): listCheckpoints' metadata filter reads it wrong`;
}

/** The snapshot's hash when its body matches it, else null (reported once). */
export function* snapshotHash(tx: Tx, id: number, problems: VerifyProblem[], seen: Map<number, string | null>): Step<string | null> {
  if (seen.has(id)) return seen.get(id)!;
  const snap = yield* tx.getSnapshot(id);
  let hash: string | null = null;
  if (!snap) problems.push({ kind: "state", id: String(id), detail: "state snapshot is missing" });
  else if (!snapshotIntact(snap)) problems.push({ kind: "state", id: String(id), detail: "state snapshot does not match its hash" });
  else hash = snap.hash;
  seen.set(id, hash);
  return hash;
}
