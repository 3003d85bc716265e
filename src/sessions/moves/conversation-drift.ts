// The drift check of a "conversation" move of a session with a workspace: its undos and replays run tools on the files,
// so a file saved by hand after the call that last changed it (drift) that one of them writes would be overwritten
// unsaved. Refused (`WORKSPACE_DRIFT`) before the first step, or saved first with `force`, as a "both" move does. A
// hand edit a call's run found there (made before it) is what that call's undo puts back (see put-back.ts): not refused
// while the file holds what that call left there (a save made after the call is drift the undo would write over).
import { ConflictError, ValidationError } from "../../models/errors.js";
import type { MoveOptions } from "../../models/inputs.js";
import type { SavedDrift } from "../../models/types.js";
import type { SessionRow, Step, Tx, WorkspaceRow } from "../../store/port/index.js";
import type { EngineContext, SessionRef } from "../core/context.js";
import { ownedCurrent, ownedSession } from "../core/owned.js";
import { checkIfAt, type IfAt } from "../core/if-at.js";
import { isLocal } from "../workspace/host.js";
import { createdSince, type NamedSeen } from "../workspace/created-since.js";
import { restoreCheck } from "../workspace/prepare-restore.js";
import { DRIFTED_ONLY } from "../workspace/named-files.js";
import { reaches } from "../workspace/named-paths.js";
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
import { writtenPaths, type RecordedReach } from "./written-paths.js";
import { PutBack, type PutBacks } from "./put-back.js";
import { refuseMove } from "./refusals.js";

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
