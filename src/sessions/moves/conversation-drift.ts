// The drift check of a "conversation" move of a session with a workspace: its undos and replays run tools on the files,
// so a file saved by hand after the call that last changed it (drift) that one of them writes would be overwritten
// unsaved. Refused (`WORKSPACE_DRIFT`) before the first step, or saved first with `force`, as a "both" move does. A
// hand edit a call's run found there (made before it) is what that call's undo puts back (see put-back.ts): not refused
// while the file holds what that call left there (a save made after the call is drift the undo would write over).
import { ConflictError, ValidationError } from "../../models/errors.js";
import type { MoveOptions } from "../../models/inputs.js";
import type { SavedDrift, ToolInvocation } from "../../models/types.js";
import type { SessionRow, Step, Tx, WorkspaceRow } from "../../store/port/index.js";
import type { EngineContext, SessionRef } from "../core/context.js";
import { ownedCurrent, ownedSession } from "../core/owned.js";
import { checkIfAt, type IfAt } from "../core/if-at.js";
import { isLocal } from "../workspace/host.js";
import { createdSince, type NamedSeen } from "../workspace/created-since.js";
import { restoreCheck } from "../workspace/prepare-restore.js";
import { DRIFTED_ONLY } from "../workspace/named-files.js";
import { namedPaths, reaches } from "../workspace/named-paths.js";
import { newestSnapshot, type SnapshotOnLineage } from "../workspace/newest-snapshot.js";
import { scan, stateOf } from "../workspace/state.js";
import { holdsRunTurn } from "../workspace/run-turns.js";
import { recordedIn, type Request } from "../requests/ledger.js";
import { saveDriftBeforeTools } from "./force.js";
import { heldInCheckpoints } from "./held-in-checkpoint.js";
import { isReplannable, PLANNING_ATTEMPTS } from "./files-planned.js";
import { refuseWritesInTheWay } from "./writes-in-the-way.js";
import { computePlan } from "./move-plan.js";
import type { BaseMoveSpec, MoveOutcome } from "./move-spec.js";
import { stoppedPutBacks } from "./own-changes.js";
import { PutBack, type PutBacks } from "./put-back.js";
import { refuseMove } from "./refusals.js";
import { replayedApplication } from "./run-steps.js";

/** What the check found: the run turn to take first (planned again holding it), or the drift saved (null: none). */
export type ConversationDrift = { turn: string } | { savedDrift: SavedDrift | null };

/**
 * Checks the files a "conversation" move's undos and replays write for drift (see the file's comment), before the
 * move is journaled; with `force`, saves the drift in a checkpoint of its own first (see `saveDriftBeforeTools`).
 */
export async function conversationDrift(
  ctx: EngineContext,
  ref: SessionRef,
  o: MoveOptions,
  prepare: (tx: Tx, session: SessionRow) => Step<BaseMoveSpec>,
  ifAt: IfAt | undefined,
  request: Request<MoveOutcome> | undefined,
): Promise<ConversationDrift> {
  // Another handle's, process's or server's write to the files between the planning and the look at them: planned again.
  for (let attempt = 1; ; attempt++) {
    try {
      const planned = await ctx.store.read((tx) => writesUnit(ctx, tx, ref, o, prepare, ifAt, request));
      if (planned === null) return { savedDrift: null };
      if (planned.turn !== undefined) return { turn: planned.turn };
      const { ws, kind } = planned;
      const { writes, keep, unsaved } = await driftReach(ctx, ref, planned);
      return { savedDrift: await saveDriftBeforeTools(ctx, ref, ws, writes, o.force ? { move: kind } : null, keep, unsaved) };
    } catch (error) {
      if (!isReplannable(error) || attempt >= PLANNING_ATTEMPTS) throw error;
    }
  }
}

/**
 * What a planned "conversation" move's drift check weighs (the move's and `plan`'s): the paths its steps write, those
 * kept, and the saves that no checkpoint holds among the files not as the move expects them.
 */
export async function driftReach(
  ctx: EngineContext,
  ref: SessionRef,
  planned: {
    ws: WorkspaceRow;
    writes: ReadonlySet<string>;
    keep: ReadonlySet<string>;
    expected: ReadonlyMap<string, string | null>;
    named: ReadonlyMap<string, readonly NamedSeen[]>;
    recorded: readonly RecordedReach[];
    stopped: PutBacks | undefined;
  },
): Promise<{ writes: Set<string>; keep: Set<string>; unsaved: string[] }> {
  const { ws, expected, stopped } = planned;
  const writes = new Set(planned.writes);
  const keep = new Set(planned.keep);
  // Where a recorded call's undo or replay writes: drift there is refused unless it is just what the call was recorded over.
  const recorded = await recordedDrift(ctx, ws, planned.recorded);
  for (const path of recorded.writes) writes.add(path);
  for (const path of recorded.keep) keep.add(path);
  // Where a no-change call's replay may write: only a file made by hand since it ran is one it never saw there.
  for (const path of await createdSince(ctx, ws, planned.named)) if (!keep.has(path)) writes.add(path);
  // A hand-edited path kept only while the file is what the move expects there: otherwise a save since, written over.
  const changed = await changedSince(ctx, ws, expected);
  for (const path of changed.keys()) writes.add(path);
  // A save there is drift even where it equals what forkpoint last saw (a hand edit is never made known, so what it
  // last saw there may be what the file held before it): unless a checkpoint keeps it, it would be lost.
  const saved = await ctx.store.read((tx) => heldInCheckpoints(tx, ref.userId, ref.id, withFile(changed), ctx.now()));
  const unsaved = [...withFile(changed).keys()].filter((path) => !saved.has(path));
  for (const path of expected.keys()) if (!writes.has(path)) keep.add(path);
  // The hand edits a stopped move (this one called again) put back, where the files still hold them as it left them.
  for (const path of stopped ? new PutBack(ws.dir, () => undefined).asLeft(stopped) : []) keep.add(path);
  return { writes, keep, unsaved };
}

/** The planned move's workspace and the paths its steps write (see `writtenPaths`); null: it runs no tool on files. */
function* writesUnit(
  ctx: EngineContext,
  tx: Tx,
  ref: SessionRef,
  o: MoveOptions,
  prepare: (tx: Tx, session: SessionRow) => Step<BaseMoveSpec>,
  ifAt: IfAt | undefined,
  request: Request<MoveOutcome> | undefined,
) {
  // The session row alone first: a session with no tools or no workspace reads nothing more (the move reads the rest).
  const row = yield* ownedSession(tx, ref.id, ref.userId);
  if (!row.hasWorkspace && o.force) throw new ValidationError("force", "applies to the workspace: the session has none");
  if (!row.hasTools || !row.hasWorkspace) return null;
  const { session, head } = yield* ownedCurrent(tx, ref.id, ref.userId);
  // A request applied already is answered by the move, which runs nothing.
  if (request && (yield* recordedIn(tx, session.id, request))) return null;
  yield* checkIfAt(tx, session, ifAt, head.position);
  const ws: WorkspaceRow | undefined = yield* tx.getWorkspace(session.id);
  // Another host's files cannot be looked at here: a "conversation" move works anywhere (its tools run here).
  if (!ws || !isLocal(ws)) return null;
  if (!holdsRunTurn(ws.dir)) return { turn: ws.dir } as const;
  const base = yield* prepare(tx, session);
  const steps = (yield* computePlan(ctx, tx, session, base.target)).steps;
  if (steps.undo.length + steps.replay.length === 0) return null;
  // Refused before any drift is saved, as the move's own planning would refuse it.
  refuseMove(steps, o);
  // A step that writes through a link, or over what forkpoint does not capture, is refused (see writes-in-the-way.ts).
  yield* refuseWritesInTheWay(tx, ws, steps.undo, steps.replay, ctx.limits.maxPayloadBytes);
  const { writes, keep, expected, named, recorded, lost } = yield* writtenPaths(tx, ws, steps.undo, steps.replay);
  refuseLostSaves(ws, lost);
  const stopped = yield* stoppedPutBacks(tx, session.id, base, steps.undo);
  return { ws, kind: base.kind, writes, keep, expected, named, recorded, stopped };
}

/**
 * The paths the steps write, in the order they run (undos, newest call first, then replays): those their calls' runs
 * changed. A call with no record of them (`recordToolCall`'s) names no path here: refusing every drifted file for it
 * would block the move over files it never touches (its own recorded write counts as drift). What the files held where
 * its arguments name as it was recorded, when kept, is `recorded` (see `recordedDrift`): the paths there are its, not a
 * later step's; without that record (an older database's, no workspace then) it is left out. An undo or a replay of a call whose run changed none (a delete of a missing file, a mkdir of
 * an empty folder) may write the paths its arguments name in the workspace (`namedPaths`): `named`, each with what
 * tells what was there as such a call ran (the files its run found there, as its record says; without one, the newest
 * checkpoint's files at or before it and forkpoint's last look), which `createdSince` weighs: a file made there by hand
 * since is drift it could destroy; a hand edit of a file that was there (a read tool's file) is not, nor is drift
 * elsewhere. `keep`: the paths
 * whose first writer found a hand edit there as its call's first run began (its record's `handEdited`): drift there is
 * that edit, not a save made after the call; an undo puts it back (kept), a replay applies its call over it again, as
 * its first run did. `expected`: those of them whose record says what the file holds if nothing changed it since (an
 * undo: what its call's run left there; a replay: the hand edit that run found, which its undo put back); they are
 * kept only while the file holds just that (older records keep them as they are). After a step with no record of its
 * paths too: a file it wrote then holds other than that, refused (or saved first when forced) rather than a save lost.
 * `lost`: paths where an undo puts back a hand edit its call found (a save no checkpoint holds) that a replay then
 * writes over, its call having found something else there, with the calls whose undos put one back there (newest
 * first): the save is not on disk before the move, so no checkpoint can keep it first (see `refuseLostSaves`).
 * `olderOver`: those of them an older call's undo writes over (its run found another hand edit there, which it puts
 * back: the later one, saved after that call, would go; or a recorded call's through a folder it names, recorded over
 * other content), as a "both" move refuses them too (it would keep the later one and take that undo's write back).
 * `held`: hand edits a stopped move's undos put back (path → the file id on disk), as if an undo before these put them back.
 */
export function* writtenPaths(
  tx: Tx,
  ws: WorkspaceRow,
  undos: readonly ToolInvocation[],
  replays: readonly ToolInvocation[],
  held: ReadonlyMap<string, string | null> = new Map(),
): Step<{
  writes: Set<string>;
  keep: Set<string>;
  expected: Map<string, string | null>;
  named: Map<string, NamedSeen[]>;
  recorded: RecordedReach[];
  lost: Map<string, string[]>;
  olderOver: Map<string, string[]>;
}> {
  const named = new Map<string, NamedSeen[]>();
  const recordedCalls: RecordedReach[] = [];
  // The paths a recorded call's arguments name as such: a step after it leaves them to its check. A file it reaches
  // through a named folder only (a shell's `cwd`) it may not have written: a step after it checks that one too.
  const recordedNamed = new Set<string>();
  const writes = new Set<string>();
  const keep = new Set<string>();
  const expected = new Map<string, string | null>();
  const lost = new Map<string, string[]>();
  const olderOver = new Map<string, string[]>();
  // The hand edit each path holds after the steps so far put it back (its id), with every call whose undo puts one back
  // there, newest first: a rewind to before the first keeps its hand edit, and each older one's is found after it.
  const putBack = new Map([...held].map(([path, id]) => [path, { id, calls: [] as string[] }]));
  const steps = [...undos.map((call) => ({ call, undo: true })), ...replays.map((call) => ({ call, undo: false }))];
  for (const { call, undo } of steps) {
    const paths = yield* tx.callPaths(call.id);
    if (paths === undefined) {
      const files = yield* tx.recordedFiles(call.id);
      if (files === undefined) continue;
      // A folder too big to list when it was recorded is left out, as before such records (see `withNamedFiles`).
      const reach = new Set(namedPaths(ws.dir, call.args).filter((path) => files.has(path)));
      if (reach.size === 0) continue;
      // Its undo writes over what a later call's undo put back in a file its arguments name as such: just what it was
      // recorded over, its own write (a later call found it as drift), which its replay makes again; other content (a
      // deletion keeps none) was made after it was recorded, a save no checkpoint holds that its undo would lose.
      // A file under a folder it names counts too (a shell's `cwd`): its undo may write there.
      for (const [path, held] of undo ? [...putBack] : []) {
        if (!reaches(reach, path)) continue;
        if (held.id !== files.get(path) && held.id !== null) {
          addLost(lost, path, held.calls);
          // Reached through a named folder only, the file may have held a hand edit as the call ran, which its undo
          // puts back: a "both" move would take that write back under the later one (a path named as such keeps it).
          if (!reach.has(path)) addLost(olderOver, path, held.calls);
        }
        putBack.delete(path);
      }
      // Its replay writes over a hand edit an undo of the move put back there, as another call's replay does.
      for (const [path, held] of undo ? [] : [...putBack]) {
        if (!reaches(reach, path)) continue;
        if (held.id !== null) addLost(lost, path, held.calls);
        putBack.delete(path);
      }
      const claimed = new Set([...writes, ...keep, ...expected.keys(), ...named.keys()]);
      recordedCalls.push({ reach, files, undo, claimed });
      for (const path of reach) recordedNamed.add(path);
      continue;
    }
    // Its undo (a mkdir's rm -r of a folder it made empty, which no snapshot holds) may write there as its replay may.
    if (paths.length === 0) {
      // Its replay writes over a hand edit an undo of the move put back where its arguments name, as another's does.
      const reach = undo ? new Set<string>() : new Set(namedPaths(ws.dir, call.args));
      for (const [path, held] of [...putBack]) {
        if (!reaches(reach, path)) continue;
        if (held.id !== null) addLost(lost, path, held.calls);
        putBack.delete(path);
      }
      // What its run found where its arguments name (see `withNamedFiles`): a file not among them was not there.
      const found = yield* tx.callOutputs(call.id);
      let at: SnapshotOnLineage | undefined | "unread" = "unread";
      for (const path of namedPaths(ws.dir, call.args)) {
        if (keep.has(path) || expected.has(path) || recordedNamed.has(path)) continue;
        let seen: NamedSeen[];
        if (found?.has(path)) seen = [new Set([...found].flatMap(([p, id]) => (id !== null && reaches(new Set([path]), p) ? [p] : [])))];
        else {
          // Not recorded (an older call, a folder too big to list): the files as of the newest snapshot and last look.
          if (at === "unread") at = yield* newestSnapshot(tx, ws.sessionId, call);
          seen = [ws.manifestId, ...(at ? [at.files.manifestId] : [])];
        }
        named.set(path, [...(named.get(path) ?? []), ...seen]);
      }
      continue;
    }
    // A call applied by a replay: its undo puts back what that replay found, the files a move left (see run-steps.ts).
    const row = undo ? yield* tx.getTool(call.id) : undefined;
    const first = !undo || !(yield* replayedApplication(tx, row!));
    const found = first ? new Set(yield* tx.callHandEdited(call.id)) : new Set();
    const recorded = yield* tx.callHandEditIds(call.id);
    const ids = first ? recorded : new Map();
    for (const path of paths) {
      const known = ids.get(path);
      // A later undo leaves a hand edit put back as it is (put-back.ts); a replay writes over it.
      const held = putBack.get(path);
      if (undo && known !== undefined && held === undefined) putBack.set(path, { id: known.found, calls: [call.id] });
      // An older call's undo puts back the hand edit its own run found there, over the later one put back: content
      // other than what that older call left (a deletion keeps none) was saved after it ran, a save it would lose.
      if (undo && known !== undefined && held !== undefined && held.id !== known.left && held.id !== null) {
        addLost(lost, path, held.calls);
        addLost(olderOver, path, held.calls);
      }
      // The file holds that older hand edit from then on (as put-back.ts holds it): a later step weighs it, not the one before.
      if (undo && known !== undefined && held !== undefined) {
        held.calls.push(call.id);
        held.id = known.found;
      }
      // The undo of a replayed application puts back what the replay found: its first run's hand edit again, where a
      // rewind had put that back (see run-steps.ts), held as a first run's is; over a later one put back, the same loss.
      const again = undo && !first ? recorded.get(path) : undefined;
      if (
        again !== undefined &&
        again.found !== null &&
        held !== undefined &&
        held.id !== null &&
        held.id !== again.left &&
        held.id !== again.found
      ) {
        addLost(lost, path, held.calls);
        addLost(olderOver, path, held.calls);
        held.calls.push(call.id);
        held.id = again.found;
      }
      if (!undo && held !== undefined && held.id !== known?.found) addLost(lost, path, held.calls);
      if (!undo) putBack.delete(path);
      if (writes.has(path) || keep.has(path) || expected.has(path) || recordedNamed.has(path)) continue;
      if (known !== undefined) expected.set(path, undo ? known.left : known.found);
      // The undo of a replay's application over a hand edit: a file holding what the call's first run left there holds
      // the replay's doing (a replay applies the call over the same hand edit again), no save made since.
      else if (undo && recorded.has(path)) expected.set(path, recorded.get(path)!.left);
      else if (found.has(path)) keep.add(path);
      else writes.add(path);
    }
  }
  return { writes, keep, expected, named, recorded: recordedCalls, lost, olderOver };
}

/** Adds `calls` (newest first) to those `lost` names for `path`, each once. */
function addLost(lost: Map<string, string[]>, path: string, calls: readonly string[]): void {
  lost.set(path, [...new Set([...(lost.get(path) ?? []), ...calls])]);
}

/**
 * A step of a call recorded with `recordToolCall` whose record says what the files held where its arguments name as it
 * was recorded (`files`; `reach`: those named paths, a folder reaching what is under it): its undo or replay writes
 * there. `claimed`: the paths a step before it writes, checked as that step's.
 */
export interface RecordedReach {
  reach: ReadonlySet<string>;
  files: ReadonlyMap<string, string | null>;
  undo: boolean;
  claimed: ReadonlySet<string>;
}

/**
 * Whether drifted `path`, which `step`'s record does not list, sits in a named folder recorded with its drifted files
 * only (`DRIFTED_ONLY`: too many to list) and in none listed whole: it had not drifted as the call was recorded, so it
 * changed since.
 */
function changedUnlisted(step: RecordedReach, path: string): boolean {
  if (step.files.has(path)) return false;
  let driftedOnly = false;
  for (const named of step.reach) {
    if (!reaches(new Set([named]), path)) continue;
    if (step.files.get(named) !== DRIFTED_ONLY) return false;
    driftedOnly = true;
  }
  return driftedOnly;
}

/**
 * The drifted files where the recorded calls of `recorded` write (each checked by the steps reaching it in turn, up to
 * one claiming it before or naming it as such): before an undo, a file holding just what the call was recorded over is
 * the call's own write (`keep`: no drift to refuse) where its arguments name that file; reached through a named folder
 * only (a shell's `cwd`), it may be a hand edit made before the call, left to the steps after it (an older call's undo
 * writing it refuses it). Any other is a change made since (`writes`: refused, or saved first when forced); before a
 * replay, any drift there is a change made since its undo.
 */
async function recordedDrift(
  ctx: EngineContext,
  ws: WorkspaceRow,
  recorded: readonly RecordedReach[],
): Promise<{ writes: string[]; keep: string[] }> {
  const out = { writes: [] as string[], keep: [] as string[] };
  if (recorded.length === 0) return out;
  // Per path, what each undo reaching it expects there, in the order they run; `named`: the last one names it as such.
  const expected = new Map<string, { ids: (string | null)[]; named: boolean }>();
  for (const path of (await restoreCheck(ctx, ws, ws.manifestId)).drifted) {
    const ids: (string | null)[] = [];
    let named = false;
    for (const step of recorded) {
      if (!reaches(step.reach, path)) continue;
      // Checked as a step's before it (an undo of a call with recorded paths, after a folder-only recorded one).
      if (step.claimed.has(path)) break;
      if (!step.undo || changedUnlisted(step, path)) {
        out.writes.push(path);
        ids.length = 0;
        break;
      }
      ids.push(step.files.get(path) ?? null);
      // Named through a folder only, the file may hold a hand edit made before the call: an older step checks it too.
      named = step.reach.has(path);
      if (named) break;
    }
    if (ids.length > 0) expected.set(path, { ids, named });
  }
  const first = (ids: (string | null)[]) => ids[0] ?? null;
  const changed = await changedSince(ctx, ws, new Map([...expected].map(([path, { ids }]) => [path, first(ids)])));
  for (const [path, { ids, named }] of expected) {
    const now = changed.has(path) ? (changed.get(path) ?? null) : first(ids);
    if (ids.some((id) => id !== now)) out.writes.push(path);
    else if (named) out.keep.push(path);
  }
  return out;
}

/**
 * Refuses a move one of whose replays writes over a hand edit an undo of it put back (`writtenPaths`'s `lost`), with
 * `force` too: that save is on no disk before the move and in no checkpoint, so nothing could keep it first. Names every
 * such call at once, newest first: each rewind to before one puts its hand edit back for a checkpoint to keep.
 */
export function refuseLostSaves(ws: WorkspaceRow, lost: ReadonlyMap<string, readonly string[]>): void {
  if (lost.size === 0) return;
  const calls = [...new Set([...lost.values()].flat())];
  const paths = [...lost.keys()];
  const one = calls.length === 1;
  throw new ConflictError(
    `this move's undo of ${one ? "call" : "calls"} ${calls.join(", ")} puts back ${paths.length === 1 ? "a change" : "changes"} ` +
      `to ${paths.join(", ")} in the workspace ${ws.dir} that no call forkpoint ran made (by hand, or by a call recorded ` +
      "with recordToolCall through a folder it names) and no checkpoint keeps, and a later step of the move (a replay, " +
      "the undo of a call recorded with recordToolCall, which was recorded over other content, or the undo of an " +
      "older call that found another change there) " +
      `writes over ${paths.length === 1 ? "it" : "them"}; force cannot save ${paths.length === 1 ? "it" : "them"} first, as ` +
      `${paths.length === 1 ? "it is" : "they are"} not in the files now: ` +
      (one
        ? "rewind to before that call first (its undo puts the change back), take a checkpoint to keep it, then move"
        : "rewind to before each of those calls in turn, newest first, taking a checkpoint after each (its undo puts " +
          "that call's change back), then move"),
    "WORKSPACE_DRIFT",
  );
}

/** The paths of `expected` whose file no longer holds what the move expects there, with what it holds (null: none). */
export async function changedSince(
  ctx: EngineContext,
  ws: WorkspaceRow,
  expected: ReadonlyMap<string, string | null>,
): Promise<Map<string, string | null>> {
  if (expected.size === 0) return new Map();
  const state = await stateOf(ctx, ws);
  return state.exclusive(async () => {
    await scan(ctx, state);
    const now = [...expected.keys()].map((path) => [path, state.cache.fileId(path)] as const);
    return new Map(now.filter(([path, id]) => id !== expected.get(path)));
  });
}

/** Those of `files` that are files (a deletion keeps no content: forkpoint's own look tells it as drift). */
const withFile = (files: ReadonlyMap<string, string | null>): Map<string, string> =>
  new Map([...files].flatMap(([path, id]) => (id === null ? [] : [[path, id] as const])));
