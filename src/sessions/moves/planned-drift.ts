// What a planned move's tool calls do to the workspace's files, worked out without running them (see `plan`): the hand
// edits a move's undos put back, and the drift a "conversation" move's undos and replays would write over.
import { shownNames } from "../../models/unsafe-text.js";
import type { ToolInvocation } from "../../models/types.js";
import type { SessionRow, Step, Tx, WorkspaceRow } from "../../store/port/index.js";
import type { EngineContext, SessionRef } from "../core/context.js";
import { isLocal } from "../workspace/host.js";
import { restoreCheck } from "../workspace/prepare-restore.js";
import { filesAt, TreeReader } from "../workspace/trees.js";
import { capturedPaths } from "../workspace/captured.js";
import { namedPaths, reaches } from "../workspace/named-paths.js";
import { changedSince, driftReach, refuseLostSaves } from "./conversation-drift.js";
import { writtenPaths, type WrittenPaths } from "./written-paths.js";
import type { MoveTarget } from "./move-plan.js";
import type { MoveSpec } from "./move-spec.js";
import { stoppedPutBacks } from "./own-changes.js";
import type { PutBacks } from "./put-back.js";
import { replayedApplication } from "./replayed-application.js";
import { undoReach } from "./recorded-over.js";
import { contentOf } from "../workspace/file-id.js";

/**
 * A hand edit a "both" move's undo puts back (its call's first run found it there), as its files step finds it: `found`,
 * its file id (null: a deletion; undefined: the record does not say); `same`, whether the target's files hold just
 * that there; `known`, whether a checkpoint of the session holds it there (then it is no drift: the restore writes over
 * it); `inTarget`, whether the target has a file there.
 */
export interface PutBackFile {
  found: string | null | undefined;
  same: boolean;
  known: boolean;
  inTarget: boolean;
  /**
   * An undo of a call recorded with `recordToolCall` writes the file before the undo that puts the hand edit back: what
   * it puts back is its tool's own (see `recordedOverPlanned`), maybe just that hand edit, and the put-back then
   * changes nothing (the move holds none: see `PutBack.hold`). Whether a replay writes over it no one can tell before.
   */
  uncertain?: boolean;
  /**
   * `known`, put back over an earlier undo's put-back there that no checkpoint keeps: where forkpoint tells each undo's
   * changes apart as it runs (a watcher), the file had drifted as this undo began, so what it puts back stays drift
   * too (see `absorbChangesUnit`); otherwise it is made known. Which, no one can tell before the move runs.
   */
  overDrift?: boolean;
}

/** The hand edits a "both" move's undos put back, by path, and the paths its replays write ("all": one has no record). */
export interface PlannedPutBacks {
  paths: ReadonlyMap<string, PutBackFile>;
  replays: ReadonlySet<string> | "all";
  /** Why the move is refused, forced or not: an older call's undo writes over a later save put back (`olderOver`). */
  lost?: string;
  /** The files the undos of recorded calls write (as their arguments name them): what they put back is their tools'. */
  recorded: ReadonlySet<string>;
  /** The files where the undo of a call applied by a replay may put back its first run's hand edit (see `PutBack`). */
  replayedOver: ReadonlySet<string>;
  /** Those of `recorded` where its call found a file as it was recorded: its undo may put one back where none is now. */
  recordedOver: ReadonlySet<string>;
  /**
   * Why the move may stop partway, forced or not: a recorded call's undo writes over a hand edit made after it that an
   * undo before it puts back, kept in no checkpoint (see `refuseTakenBack`).
   */
  takenBack?: string;
}

/** `undone` and `replayed` in the order the move runs them; `manifestId`: the snapshot its files step restores. */
export function* plannedPutBacks(
  tx: Tx,
  sessionId: string,
  undone: readonly ToolInvocation[],
  replayed: readonly ToolInvocation[],
  manifestId: number,
): Step<PlannedPutBacks> {
  // What each path holds once the undos ran: an older call's undo puts back the hand edit its own run found, and that
  // one stays (see `PutBack.hold`).
  const found = new Map<string, string | null | undefined>();
  // The files a recorded call's undo writes before (see `PutBackFile.uncertain`).
  const recorded = new Set<string>();
  const recordedOver = new Set<string>();
  const replayedOver = new Set<string>();
  const uncertain = new Set<string>();
  // Where a recorded call's undo writes over a hand edit made after it, put back: path → [that call, the put-back's].
  const over = new Map<string, [string, string]>();
  const putBy = new Map<string, string>();
  // The put-backs a later undo there then writes over, oldest last: path → their file ids (see `PutBackFile.overDrift`).
  const below = new Map<string, (string | null | undefined)[]>();
  for (const call of undone) {
    const row = yield* tx.getTool(call.id);
    // A call applied by a replay: its undo puts back what the files held then, forkpoint's own (see run-steps.ts), or
    // its first run's hand edit again, where a rewind had put that back and the replay ran over it: no one can tell
    // which before it runs.
    const replayed = row !== undefined && (yield* replayedApplication(tx, row));
    if (replayed) for (const [path, ids] of yield* tx.callHandEditIds(call.id)) if (ids.found !== null) replayedOver.add(path);
    if (row && !replayed) {
      const ids = yield* tx.callHandEditIds(call.id);
      for (const path of yield* tx.callHandEdited(call.id)) {
        if (found.has(path)) below.set(path, [...(below.get(path) ?? []), found.get(path)]);
        found.set(path, ids.get(path)?.found);
        putBy.set(path, call.id);
        if (reaches(recorded, path)) uncertain.add(path);
      }
    }
    const reach = yield* undoReach(tx, sessionId, { entryId: call.id });
    for (const path of reach.named) {
      recorded.add(path);
      if (reach.left.get(path) != null) recordedOver.add(path);
      if (!found.has(path)) continue;
      // A recorded call's undo writing over a hand edit put back before it: its own write, no longer held, unless that
      // hand edit was made after it was recorded (see `PutBack.keepSaved`): then that undo may fail over it.
      if (madeAfterRecorded(found.get(path), reach.left.get(path))) {
        if (!over.has(path)) over.set(path, [call.id, putBy.get(path)!]);
      } else {
        found.delete(path);
        uncertain.delete(path);
        below.delete(path);
      }
    }
  }
  const paths = new Map<string, PutBackFile>();
  if (found.size > 0) {
    const reader = new TreeReader();
    const target = yield* filesAt(tx, reader, yield* reader.rootOf(tx, manifestId), found.keys());
    // A content a checkpoint holds there is made known as the undo writes it (see `absorbChanges`): no drift.
    const files = new Map([...found].flatMap(([path, id]) => (typeof id === "string" ? [[path, id] as const] : [])));
    const captured = yield* capturedPaths(tx, sessionId, files);
    const drifting = yield* uncaptured(tx, sessionId, below);
    for (const [path, id] of found) {
      const inTarget = target.has(path);
      const same = id !== undefined && id === (target.get(path) ?? null);
      const overDrift = captured.has(path) && !same && drifting.has(path);
      paths.set(path, {
        found: id,
        same,
        known: captured.has(path),
        inTarget,
        ...(uncertain.has(path) ? { uncertain: true } : {}),
        ...(overDrift ? { overDrift } : {}),
      });
    }
  }
  const refusals = { ...(yield* lostOver(tx, sessionId, undone)), ...(yield* takenBackOver(tx, sessionId, over, paths)) };
  const replays = new Set<string>();
  const ws = replayed.length > 0 ? yield* tx.getWorkspace(sessionId) : undefined;
  for (const call of replayed) {
    const written = yield* tx.callPaths(call.id);
    if (written === undefined) return { paths, replays: "all", recorded, recordedOver, replayedOver, ...refusals };
    for (const path of written) replays.add(path);
    // Its run changed no file: run again, it may write where its arguments name (see `replayPaths`).
    for (const path of written.length === 0 && ws ? namedPaths(ws.dir, call.args) : []) replays.add(path);
  }
  return { paths, replays, recorded, recordedOver, replayedOver, ...refusals };
}

/** The paths of `below` where a put-back holds content no checkpoint keeps there (a deletion, or not recorded: none). */
function* uncaptured(tx: Tx, sessionId: string, below: ReadonlyMap<string, readonly (string | null | undefined)[]>): Step<Set<string>> {
  const out = new Set<string>();
  for (const [path, ids] of below)
    for (const id of ids)
      if (typeof id !== "string" || !(yield* capturedPaths(tx, sessionId, new Map([[path, id]]))).has(path)) {
        out.add(path);
        break;
      }
  return out;
}

/**
 * Where a recorded call's undo writes over a hand edit put back (`over`: path → [that call, the put-back's]): the undo
 * fails unless a checkpoint keeps the hand edit, or what it puts back, which no one can tell before it runs (see
 * `refuseTakenBack`).
 */
function* takenBackOver(
  tx: Tx,
  sessionId: string,
  over: ReadonlyMap<string, [string, string]>,
  paths: ReadonlyMap<string, PutBackFile>,
): Step<{ takenBack?: string }> {
  const open = [...over].filter(([path]) => !paths.get(path)?.known);
  if (open.length === 0) return {};
  const ws = (yield* tx.getWorkspace(sessionId))!;
  return {
    takenBack: open
      .map(
        ([path, [recorded, putBack]]) =>
          `this move's undo of call ${putBack} puts back a change made by hand to ${path} in the workspace ${ws.dir}, ` +
          `kept in no checkpoint, and the undo of recorded call ${recorded} (made before that change) writes it next: ` +
          "what that undo puts back is its tool's own, which forkpoint cannot tell before it runs: content no " +
          "checkpoint keeps (a change made by hand before the recorded call, say), the undo fails there (UNDO_FAILED), " +
          "forced or not, the change made by hand on disk: take a checkpoint to keep it, then move again",
      )
      .join("; or "),
  };
}

/** `PutBack.keepSaved`'s `madeAfter`, on a hand edit's file id (`found`; null: a deletion; undefined: not recorded). */
const madeAfterRecorded = (found: string | null | undefined, left: string | null | undefined): boolean =>
  found === undefined || (left !== undefined && found !== null && (left === null || contentOf(found) !== contentOf(left)));

/** The refusal of a move whose undos (`undone`, as it runs them) lose a save put back (see `writtenPaths`'s `olderOver`). */
function* lostOver(tx: Tx, sessionId: string, undone: readonly ToolInvocation[]): Step<{ lost?: string }> {
  const ws = undone.length > 0 ? yield* tx.getWorkspace(sessionId) : null;
  if (!ws) return {};
  try {
    refuseLostSaves(ws, (yield* writtenPaths(tx, ws, undone, [])).olderOver);
    return {};
  } catch (error) {
    return { lost: (error as Error).message };
  }
}

/**
 * How a "both" move's files step finds the hand edits its undos put back: `kept` (left as they are, drift), `written`
 * and `deleted` (what forkpoint knows: a checkpoint holds it, or the file holds it now, which a forced move saves first),
 * `same` (already as the target has it).
 */
export async function putBackFiles(
  ctx: EngineContext,
  ws: WorkspaceRow,
  paths: ReadonlyMap<string, PutBackFile>,
): Promise<{ kept: string[]; written: string[]; deleted: string[]; same: string[] }> {
  const open = new Map([...paths].flatMap(([path, p]) => (p.same || p.known || p.found === undefined ? [] : [[path, p.found] as const])));
  const changed = await changedSince(ctx, ws, open);
  const out = { kept: [] as string[], written: [] as string[], deleted: [] as string[], same: [] as string[] };
  for (const [path, p] of paths) {
    if (p.same) out.same.push(path);
    else if (p.known || (open.has(path) && !changed.has(path))) (p.inTarget ? out.written : out.deleted).push(path);
    else out.kept.push(path);
  }
  return out;
}

/**
 * What stops a move whose put-back hand edits `kept` (left as they are by its files step) a replay then writes over:
 * its files step refuses that, forced or not (see `refuseReplayOver`); undefined when no replay writes one.
 */
export function replayOver(dir: string, kept: readonly string[], replays: ReadonlySet<string> | "all"): string | undefined {
  const over = replays === "all" ? kept : kept.filter((p) => reaches(replays, p));
  if (over.length === 0) return undefined;
  const shown = shownNames(over);
  return (
    `this move's undos put back changes made by hand to ${shown} in the workspace ${dir}, and ` +
    `${replays === "all" ? "a call it replays may write" : "a call it replays writes"} ${over.length === 1 ? "it" : "them"}: ` +
    "the move stops there (WORKSPACE_DRIFT), forced or not; rewind to before those calls first (their undos put the " +
    "changes back), take a checkpoint to keep them, then move"
  );
}

/** What a "conversation" move's drift check reads in its planning unit (see conversation-drift.ts). */
export interface ConversationWrites extends Omit<WrittenPaths, "olderOver"> {
  ws: WorkspaceRow;
  stopped: PutBacks | undefined;
}

/** The paths a "conversation" move's steps write, as its drift check reads them; null when it makes no such check. */
export function* conversationWrites(
  tx: Tx,
  session: SessionRow,
  move: { kind: MoveSpec["kind"]; target: MoveTarget },
  undone: readonly ToolInvocation[],
  replayed: readonly ToolInvocation[],
): Step<ConversationWrites | null> {
  if (!session.hasTools || !session.hasWorkspace || undone.length + replayed.length === 0) return null;
  const ws = yield* tx.getWorkspace(session.id);
  // Another host's files are not looked at: the move does not check them either.
  if (!ws || !isLocal(ws)) return null;
  const { writes, keep, expected, named, recorded, lost } = yield* writtenPaths(tx, ws, undone, replayed);
  return { ws, writes, keep, expected, named, recorded, lost, stopped: yield* stoppedPutBacks(tx, session.id, move, undone) };
}

/**
 * The drift a "conversation" move refuses (`WORKSPACE_DRIFT`; with `force`, saved first): the files changed outside
 * forkpoint that its undos and replays write; and what refuses it even forced (a hand edit its undo puts back that a
 * replay writes over), as `conversationDrift` finds them.
 */
export async function plannedConversationDrift(
  ctx: EngineContext,
  ref: SessionRef,
  w: ConversationWrites,
): Promise<{ drift: string[]; blocked?: string }> {
  const { ws } = w;
  const { writes, keep, unsaved } = await driftReach(ctx, ref, w);
  const found = (await restoreCheck(ctx, ws, ws.manifestId)).drifted;
  const drifted = [...found, ...unsaved.filter((path) => !found.includes(path))];
  const drift = drifted.filter((path) => !keep.has(path) && reaches(writes, path)).sort();
  let blocked: string | undefined;
  try {
    refuseLostSaves(ws, w.lost);
  } catch (error) {
    blocked = (error as Error).message;
  }
  return { drift, ...(blocked ? { blocked } : {}) };
}
