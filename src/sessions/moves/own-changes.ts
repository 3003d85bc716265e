// What a move's own undos and replays change in the session's workspace is forkpoint's doing, not drift: absorbed after
// each step where a watcher makes that cheap, before the step is recorded done, so that a crash leaves as drift only
// what the interrupted step (then reported unknown) may have done, and recovery restores the target's files over the
// rest. Without a watcher a scan walks the whole tree: absorbed before the files step and at the end only.
import type { WorkspaceRow } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { absorbChanges, filesBefore, type FilesBefore } from "../workspace/absorb.js";
import { scan } from "../workspace/state.js";

export class OwnChanges {
  #before: FilesBefore | null = null;
  /**
   * The paths the steps since the last absorb may change: an undo changes what its call changed (its recorded paths),
   * so a file saved by hand meanwhile elsewhere stays drift, and the restore keeps it. "all": a step whose paths are
   * not known (a replay runs the tool anew; a call recorded without paths).
   */
  #may: Set<string> | "all" = new Set();
  /** Paths changed by hand while this move ran, found when a step's changes were absorbed (left as drift). */
  readonly #byHand = new Set<string>();

  private constructor(
    private readonly ctx: EngineContext,
    private readonly sessionId: string,
    private readonly ws: WorkspaceRow | undefined,
  ) {}

  /**
   * Starts tracking the session's workspace (nothing to track without one, or on another host). `hasWorkspace`: known
   * already (false skips the read). Throws only when the store does.
   */
  static async start(ctx: EngineContext, sessionId: string, hasWorkspace = true): Promise<OwnChanges> {
    const ws = hasWorkspace ? await ctx.store.read((tx) => tx.getWorkspace(sessionId)) : undefined;
    const own = new OwnChanges(ctx, sessionId, ws);
    await own.resume();
    return own;
  }

  /** A step is about to run that may change `paths` (undefined: any path). */
  expect(paths: readonly string[] | undefined): void {
    if (this.#may === "all") return;
    if (paths === undefined) this.#may = "all";
    else for (const path of paths) this.#may.add(path);
  }

  /**
   * Of `paths` (what the next undo writes: its call's recorded paths), those changed by hand while this move ran: not by
   * a step of it (their paths are in `#may`). The undo would write over them; empty when none, or when it cannot tell.
   */
  async changedByHand(paths: readonly string[] | undefined): Promise<string[]> {
    const before = this.#before;
    const may = this.#may;
    if (!paths || paths.length === 0 || may === "all") return [];
    const earlier = paths.filter((p) => this.#byHand.has(p));
    if (!before) return earlier;
    const { state, tracker } = before;
    const now = await state.exclusive(async () => {
      await scan(this.ctx, state);
      return paths.filter((p) => tracker.has(p) && tracker.get(p) !== state.cache.fileId(p) && !may.has(p));
    });
    return [...new Set([...earlier, ...now])];
  }

  /** A step ran: what changed since the last one becomes known, and what changes next is tracked. */
  async step(): Promise<void> {
    const state = this.#before?.state;
    if (!state?.watch || !state.walked) return;
    await this.pause();
    await this.resume();
  }

  /** Before the files are restored: absorbed so far, not tracked meanwhile (the restore records what it writes). */
  async pause(): Promise<void> {
    const before = this.#before;
    const may = this.#may;
    this.#before = null;
    this.#may = new Set();
    await absorbChanges(this.ctx, this.sessionId, before, undefined, may === "all" ? undefined : may);
    // What changed outside the steps' paths stays drift: an undo that writes there later must not run over it.
    if (before && may !== "all")
      for (const [path, was] of before.tracker) if (!may.has(path) && before.state.cache.fileId(path) !== was) this.#byHand.add(path);
  }

  /** Tracked again from here (after the files were restored). */
  async resume(): Promise<void> {
    if (this.ws) this.#before = await filesBefore(this.ctx, this.ws);
  }

  /** The move ended (or stopped): what its last steps changed becomes known. */
  end(): Promise<void> {
    return this.pause();
  }
}
