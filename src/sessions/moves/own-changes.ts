// What a move's own undos and replays change in the session's workspace is forkpoint's doing, not drift: absorbed after
// each step where a watcher makes that cheap, before the step is recorded done, so that a crash leaves as drift only
// what the interrupted step (then reported unknown) may have done, and recovery restores the target's files over the
// rest. Without a watcher a scan walks the whole tree: absorbed before the files step and at the end only. An undo or
// a replay is held to the files its call's run changed: what changes elsewhere meanwhile (a save by hand) stays drift,
// which the move's files step leaves as it is (see move-files.ts); so does a hand edit an undo puts back, which the
// move's later undos leave as put back (see put-back.ts).
import type { MoveStepRow, Step, Tx, WorkspaceRow } from "../../store/port/index.js";
import type { ToolInvocation } from "../../models/types.js";
import type { EngineContext } from "../core/context.js";
import type { MoveSpec } from "./move-spec.js";
import { absorbChanges, filesBefore, type FilesBefore } from "../workspace/absorb.js";
import { byFileId, PutBack, type PutBacks } from "./put-back.js";
import { prepareRestore } from "../workspace/prepare-restore.js";
import { reaches } from "../workspace/named-paths.js";
import { setOwn } from "../../models/json.js";
import { diskFileId } from "../workspace/disk-file-id.js";
import { writtenPaths } from "./written-paths.js";

export class OwnChanges {
  #before: FilesBefore | null = null;
  /**
   * The paths the steps since the last absorb may have changed: those their calls' runs changed; "all" after a call
   * without that record (recorded with `recordToolCall`, or before paths were kept).
   */
  #may: Set<string> | "all" = new Set();
  /** Paths an undo since the last absorb put a hand edit back in (its call's run found it there): drift, not ours. */
  #unseen = new Set<string>();
  /**
   * Paths an earlier step of this move put a hand edit back in, absorbed as drift: a later step of a call without a
   * record of its paths that may change them and does writes over that edit as its tool would (it may be that call's
   * own effect, as a recorded call's write found as drift is): its own doing, not left as drift. A watcher's only.
   */
  #mayOwn = new Set<string>();
  /**
   * Files a recorded call's undo since the last absorb wrote (its arguments name them): what it puts back is its
   * result's to say, a hand edit made before that call maybe, so it stays drift (unless a checkpoint holds it) until a
   * later step of a call with recorded paths writes there.
   */
  #leftDrift = new Set<string>();
  /** Those of `#leftDrift` absorbed as drift since, and those of them a later step of a call with recorded paths wrote. */
  #leftAbsorbed = new Set<string>();
  #retaken = new Set<string>();
  /** The hand edits this move's undos put back, kept as put back by later undos of calls with recorded paths. */
  #putBack: PutBack | null = null;
  /**
   * The running step: an undo of a call with recorded paths, one without, or a replay; and what the
   * paths it may put a hand edit back in held as it began.
   */
  #step: {
    kind: "undo" | "pathless" | "replay";
    before: ReturnType<PutBack["read"]>;
    paths: ReadonlySet<string>;
    left?: ReadonlyMap<string, string | null>;
    /** Put back as a hand edit only where the file then holds just that (file ids): see `expect`'s `found`. */
    found?: ReadonlyMap<string, string>;
  } | null = null;

  private constructor(
    private readonly ctx: EngineContext,
    private readonly sessionId: string,
    private readonly ws: WorkspaceRow | undefined,
    private readonly ownDrift: ReadonlySet<string> | "all" | undefined,
  ) {}

  /**
   * Starts tracking the session's workspace (nothing to track without one, or on another host). `hasWorkspace`: known
   * already (false skips the read). `ownDrift`: the paths a step of the move that a crash interrupted may have changed
   * (see `interruptedPaths`), or changed by hand into just what its restore makes them (see `PreparedRestore.settled`),
   * made known with what later steps change there. Throws only when the store does.
   */
  static async start(
    ctx: EngineContext,
    sessionId: string,
    hasWorkspace = true,
    ownDrift?: ReadonlySet<string> | "all",
    putBack: readonly string[] = [],
    resumed?: { moveId: string; found: ReadonlySet<string> },
  ): Promise<OwnChanges> {
    const ws = hasWorkspace ? await ctx.store.read((tx) => tx.getWorkspace(sessionId)) : undefined;
    // A hand edit put back stays drift, even where the interrupted step may have written (see `putBackPaths`).
    const drift = ownDrift instanceof Set ? new Set([...ownDrift].filter((path) => !putBack.includes(path))) : ownDrift;
    const own = new OwnChanges(ctx, sessionId, ws, drift);
    await own.resume();
    // A resumed move: the hand edits its finished undos put back are on disk as they left them (see `putBackPaths`).
    if (own.holding) own.#putBackOf(ws!).holdAsIs(putBack);
    if (own.holding && resumed && ownDrift instanceof Set) {
      const saved = (await own.#drifted(ws!, resumed.moveId)).filter(
        (path) => !ownDrift.has(path) && !putBack.includes(path) && !resumed.found.has(path),
      );
      own.#putBackOf(ws!).holdSaved(saved);
    }
    return own;
  }

  /**
   * A resumed move's drift: what changed since forkpoint last saw the files. Its undos to run put back no hand edit
   * there, nor did the step a crash interrupted change it: a save by hand while the crashed process ran the move (the
   * move refused any drift as it began), which those undos leave as it is (empty when it cannot be read now).
   */
  async #drifted(ws: WorkspaceRow, moveId: string): Promise<string[]> {
    try {
      return (await prepareRestore(this.ctx, ws, ws.manifestId, "leave", moveId)).drifted;
    } catch {
      return [];
    }
  }

  #putBackOf(ws: WorkspaceRow): PutBack {
    this.#putBack ??= new PutBack(ws.dir, (message, error) => this.ctx.logger.warn(message, error));
    return this.#putBack;
  }

  /** Whether steps' paths are asked for (`expect`): the workspace's files are tracked here. */
  get holding(): boolean {
    return this.#before !== null;
  }

  /**
   * A step (`op`) is about to run that may change `paths` (undefined: any path); `unseen`: those it puts back as a hand
   * edit its call's run found there, which no checkpoint may hold (an undo's), taken as drift. `left`: a recorded call's
   * undo's, what the files its arguments name held as it was recorded (file ids, null: no file).
   */
  expect(
    paths: readonly string[] | undefined,
    unseen: readonly string[] = [],
    op: "undo" | "replay" = "undo",
    left?: ReadonlyMap<string, string | null>,
    found?: ReadonlyMap<string, string>,
  ): void {
    for (const path of unseen) this.#unseen.add(path);
    if (this.ws && this.holding) {
      const putBack = this.#putBackOf(this.ws);
      // Where its call's run found a hand edit too, the undo puts that one back (see `PutBack.hold`): not kept from it.
      const kind = op === "replay" ? "replay" : paths === undefined ? "pathless" : "undo";
      const before = putBack.read([...unseen, ...(found?.keys() ?? [])]);
      this.#step = { kind, before, paths: new Set(paths ?? []), left, ...(found ? { found } : {}) };
      // The last read before its handler runs: what changes a held file from here to `step` is the step's doing.
      putBack.open();
    }
    if (this.#may === "all") return;
    if (paths === undefined) this.#may = "all";
    else for (const path of paths) this.#may.add(path);
  }

  /**
   * The step that just ran, a recorded call's undo: the hand edits put back earlier (or saves made during the move) it
   * wrote over that `step` writes back, taking its write there back (see `PutBack.writtenBack`).
   */
  overPutBack(): Map<string, string | null> {
    const ran = this.#step;
    if (!ran || ran.kind !== "pathless" || !this.#putBack) return new Map();
    return this.#putBack.heldIds(this.#putBack.writtenBack(ran.left));
  }

  /** What the step that just ran wrote in `paths` stays: the hand edits put back there are no longer held. */
  keepWritten(paths: readonly string[]): void {
    this.#putBack?.drop(paths);
  }

  /**
   * The step that just ran (a recorded call's undo) wrote `named`: what it left in `unsaved` stays drift (see
   * `#leftDrift`), the rest is its own doing (over what an earlier one left as drift, too).
   */
  leaveDrift(named: readonly string[], unsaved: readonly string[]): void {
    if (!this.holding) return;
    for (const path of named) {
      if (unsaved.includes(path)) this.#leftDrift.add(path);
      else if (this.#leftDrift.delete(path) || this.#leftAbsorbed.delete(path)) this.#retaken.add(path);
    }
  }

  /** Holds the hand edits the stopped move just before this one put back (see `stoppedPutBacks`), where still as left. */
  holdStopped(made: PutBacks | undefined): void {
    if (made && this.ws && this.holding) this.#putBackOf(this.ws).holdIfAsLeft(made);
  }

  /**
   * A step ran (`undone`: an undo that succeeded): the hand edits put back earlier that it wrote over are written back,
   * those it put back are kept from now on (returned, for its journal); what changed since the last step becomes known,
   * and what changes next is tracked.
   */
  async step(undone = false): Promise<PutBacks> {
    let made: PutBacks = {};
    const ran = this.#step;
    this.#step = null;
    // The undo of a replayed application put back what that replay found: the hand edit its call's first run found,
    // when the file holds just that (a rewind put it back, and the replay ran over it): drift, held as a first run's.
    if (ran?.found && this.#putBack)
      for (const [path, id] of ran.found) {
        if (this.#putBack.holdsId(path, id)) this.#unseen.add(path);
        else ran.before.delete(path);
      }
    // What a step of a call with recorded paths wrote there is its own doing again.
    if (ran && ran.kind !== "pathless")
      for (const path of ran.paths) {
        this.#leftDrift.delete(path);
        if (this.#leftAbsorbed.delete(path)) this.#retaken.add(path);
      }
    if (ran && this.#putBack) {
      // A call without recorded paths may have written its own effect there: what it wrote stays (see `#mayOwn`). A
      // replay applies its call again: what it writes is that call's effect, never taken back for a hand edit.
      if (ran.kind === "undo") this.#putBack.keep(new Set(ran.before.keys()), ran.paths);
      // Its undo may write its own effect over a hand edit put back, not over a save made during the move, nor over
      // what its record says it did not leave there.
      else if (ran.kind === "pathless") this.#putBack.keepSaved(ran.left);
      else this.#putBack.release();
      if (undone) made = this.#putBack.hold(ran.before);
    }
    const state = this.#before?.state;
    if (!state?.watch || !state.walked) return made;
    const drifted = await this.pause();
    await this.resume();
    // Changed meanwhile outside the step's files: a save by hand during the move, held from now on as put-back hand
    // edits are, so that a later undo writing that file (its call's run did) leaves the save as it is.
    if (drifted.length > 0 && this.ws && this.holding) this.#putBackOf(this.ws).holdSaved(drifted);
    return made;
  }

  /**
   * Before the files are restored: absorbed so far, not tracked meanwhile (the restore records what it writes). Returns
   * the paths changed outside the steps' files since the last absorb, which stay drift (see `absorbChanges`).
   */
  async pause(): Promise<string[]> {
    const before = this.#before;
    const may = this.#may;
    const unseen = this.#unseen;
    const left = new Set([...unseen, ...this.#leftDrift]);
    for (const path of this.#leftDrift) this.#leftAbsorbed.add(path);
    this.#before = null;
    this.#may = new Set();
    this.#unseen = new Set();
    this.#leftDrift = new Set();
    const own = this.#ownDrift(may);
    this.#retaken = new Set();
    const drifted = await absorbChanges(this.ctx, this.sessionId, before, undefined, may === "all" ? undefined : may, own, left);
    if (before?.state.watch && before.state.walked) for (const path of unseen) this.#mayOwn.add(path);
    return drifted;
  }

  /** The drifted paths this absorb's changes may make known: a crash's, and the hand edits put back earlier a call without recorded paths may change. */
  #ownDrift(may: Set<string> | "all"): ReadonlySet<string> | "all" | undefined {
    const own =
      this.ownDrift === "all" || may !== "all" || this.#mayOwn.size === 0
        ? this.ownDrift
        : new Set([...(this.ownDrift ?? []), ...this.#mayOwn]);
    // What a recorded call's undo left as drift, written since by a step of a call with recorded paths, is its own again.
    return own === "all" || this.#retaken.size === 0 ? own : new Set([...(own ?? []), ...this.#retaken]);
  }

  /**
   * Before a replay that writes `paths` (undefined: any path, a call without that record): those of them saved by hand
   * during this move (while a step ran, where a watcher tells each step's changes apart, or over a hand edit an undo put
   * back), which the replay would overwrite unsaved.
   */
  savedIn(paths: readonly string[] | undefined): string[] {
    if (!this.#putBack || !this.holding) return [];
    return this.#putBack.savedIn(paths === undefined ? "all" : new Set(paths));
  }

  /** The move's files step restored the files: held paths it wrote hold no unsaved save any more (see `PutBack.restored`). */
  restored(): void {
    this.#putBack?.restored();
  }

  /** Tracked again from here (after the files were restored). */
  async resume(): Promise<void> {
    if (this.ws) this.#before = await filesBefore(this.ctx, this.ws);
  }

  /** The move ended (or stopped): what its last steps changed becomes known. */
  async end(): Promise<void> {
    await this.pause();
  }
}

/**
 * The paths a resumed move's finished undos put a hand edit back in (their calls' runs found it there), those a step a
 * crash interrupted may have changed since included: held as they are, whoever's doing that is, and left as drift (see
 * `OwnChanges.start`), so the files step refuses it rather than a later undo deleting a hand edit.
 */
export function* putBackPaths(tx: Tx, steps: readonly MoveStepRow[], interrupted: ReadonlySet<string> | "all"): Step<string[]> {
  if (interrupted === "all") return [];
  const out = new Set<string>();
  for (const step of steps) {
    if (step.status === "pending") continue;
    // A step of a call without recorded paths owns what it wrote there (see `PutBack.release`), but which paths it
    // changed is not known now: they are held as they are on disk, as it left them (the hand edit, most often).
    if (step.op === "undo" && step.status === "done") for (const path of yield* tx.callHandEdited(step.entryId)) out.add(path);
  }
  return [...out];
}

/** The paths the pending undos of a resumed move put a hand edit back in (their calls' runs found one there). */
export function* foundByPending(tx: Tx, steps: readonly MoveStepRow[]): Step<Set<string>> {
  const out = new Set<string>();
  for (const step of steps)
    if (step.op === "undo" && step.status === "pending") for (const path of yield* tx.callHandEdited(step.entryId)) out.add(path);
  return out;
}

/**
 * The paths the steps of a resumed move that a crash interrupted may have changed ("all": one has no record of its
 * call's paths): drifted when the move resumes, they are the move's own doing, not a hand edit.
 */
export function* interruptedPaths(tx: Tx, steps: readonly MoveStepRow[]): Step<Set<string> | "all"> {
  const out = new Set<string>();
  for (const step of steps) {
    if (step.status !== "unknown" && step.status !== "running") continue;
    const paths = yield* tx.callPaths(step.entryId);
    if (paths === undefined) return "all";
    for (const path of paths) out.add(path);
  }
  return out;
}

/**
 * The paths of `made` (a stopped move's put-backs, see `stoppedPutBacks`) the files still hold just as put back: a "both"
 * move called again leaves them as they are and lists them in `files.kept`, as the stopped move's files step would have
 * (a crash that stopped it, say, its resumed files step refusing the drift), neither drift to refuse or save nor written.
 * Not those a replay of the move writes (`replays`, "all": any): that stops the move unless a checkpoint keeps the hand
 * edit, which the move then writes over (see `refuseReplayOver`).
 */
export function heldPutBacks(dir: string, made: PutBacks | undefined, replays: ReadonlySet<string> | "all"): string[] {
  if (!made || replays === "all") return [];
  return new PutBack(dir, () => undefined).asLeft(made).filter((path) => !reaches(replays, path));
}

/**
 * The hand edits the session's last move put back, when it stopped ("failed") and this one (`spec`) is that move called
 * again (same kind, same target): what its undos' journal records (for an undo a crash interrupted, which journaled
 * none: the hand edits its call's first run found, held where the files hold just that), and what it held itself from
 * the one stopped before it. A move of another kind or target, or after one that finished, starts afresh. Not those an
 * older call's undo among `undos` (this move's, as it runs them) writes over with the hand edit its own run found (see
 * `overwrittenByOlder`).
 */
export function* stoppedPutBacks(
  tx: Tx,
  sessionId: string,
  spec: Pick<MoveSpec, "kind" | "target">,
  undos: readonly ToolInvocation[],
): Step<PutBacks | undefined> {
  const last = yield* tx.lastMove(sessionId);
  if (last?.status !== "failed") return undefined;
  const was = JSON.parse(last.spec) as MoveSpec;
  if (was.kind !== spec.kind || JSON.stringify(was.target) !== JSON.stringify(spec.target)) return undefined;
  const out: PutBacks = { ...was.putBacks };
  const interrupted: PutBacks = {};
  for (const step of yield* tx.moveSteps(last.id)) {
    if (step.op !== "undo") continue;
    if (step.status === "done" && step.result !== null)
      for (const [path, print] of Object.entries((JSON.parse(step.result) as { putBack?: PutBacks }).putBack ?? {}))
        setOwn(out, path, print);
    // Interrupted by a crash (resolved or not), it journaled no put-back: what its call's first run found there, if the
    // files hold that (the undo put it back before the crash).
    else if (step.status === "unknown" || step.status === "running" || step.status === "done")
      for (const [path, print] of Object.entries(yield* foundByRun(tx, step.entryId))) setOwn(interrupted, path, print);
  }
  for (const [path, print] of Object.entries(interrupted)) if (!Object.hasOwn(out, path)) setOwn(out, path, print);
  for (const path of yield* overwrittenByOlder(tx, sessionId, out, undos)) delete out[path];
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The paths of `made` (a stopped move's put-backs) that an older call's undo among `undos` writes over with the hand
 * edit its own run found there (`writtenPaths`'s `olderOver`). A fresh move refuses that, forced or not, as the later
 * hand edit is on no disk before it; called again after the stop, it is on disk: held, it would be lost under the older
 * one, so it is drift again, refused, or saved first with `force`, as the stop's error says.
 */
function* overwrittenByOlder(tx: Tx, sessionId: string, made: PutBacks, undos: readonly ToolInvocation[]): Step<string[]> {
  const ws = undos.length > 0 ? yield* tx.getWorkspace(sessionId) : undefined;
  if (!ws) return [];
  const held = new Map<string, string | null>();
  for (const path of Object.keys(made)) {
    const id = diskFileId(ws.dir, path);
    if (id !== undefined) held.set(path, id);
  }
  const { olderOver } = yield* writtenPaths(tx, ws, undos, [], held);
  return [...held.keys()].filter((path) => olderOver.has(path));
}

/** The hand edits call `entryId`'s first run found (its undo puts them back), by file id (see `byFileId`). */
function* foundByRun(tx: Tx, entryId: string): Step<PutBacks> {
  const row = yield* tx.getTool(entryId);
  // A call applied by a replay: its undo puts back what the files held then, forkpoint's own (see run-steps.ts).
  if (!row || (row.appliedSeq !== null && (yield* tx.replayResult(row.id, row.appliedSeq)) !== undefined)) return {};
  const out: PutBacks = {};
  for (const [path, { found }] of yield* tx.callHandEditIds(entryId)) out[path] = found === null ? null : byFileId(found);
  return out;
}
