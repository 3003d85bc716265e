// Hand edits a move's undo puts back (its call's run found them there) are the user's: the move's later undos leave
// them as put back. What changes a held file is told apart by when it changes: within an undo's run (between the
// snapshot taken just before its handler starts and the read just after it returns) it is that undo's write, wherever
// its call's run wrote (an undo may restore a snapshot of several files), and is taken back; between steps it is the
// user's own save during the move: drift, left as it is and held from then on. A save by hand made while an undo runs
// cannot be told from that undo's write: it is taken back too, the one case this reading gets wrong. A call without a
// record of its paths may have written that content itself (a recorded call's write is drift too): what its undo writes
// there stays, the move's own from then on; so does what a replay writes.
import { createHash } from "node:crypto";
import { chmodSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { codeOf } from "../workspace/walk.js";
import { contentOf, executableMode, fileIdOf } from "../workspace/file-id.js";
import { stagedName } from "../workspace/staged.js";
import { writeStaged } from "../workspace/files.js";

/** A file as put back: its content and mode; null: no file there (a deletion by hand put back). */
type Held = { content: Buffer; mode: number } | null;

/**
 * The put-backs an undo made, as its journal keeps them: each path with its content's fingerprint (null: a deletion),
 * so that the move called again after a stop holds them only where the file still holds just that. An undo a crash
 * interrupted journaled none: its call's record names the hand edit it puts back by file id (`byFileId`).
 */
export type PutBacks = Record<string, string | null>;

/** A put-back named by its file id (see file-id.ts), not its fingerprint: an interrupted undo's (see `PutBacks`). */
export const byFileId = (id: string): string => `${FILE_ID}${id}`;
const FILE_ID = "id:";

export class PutBack {
  /** The paths holding a hand edit put back, with what it is. */
  readonly #held = new Map<string, Held>();
  /** The held paths whose content is the user's own save during the move (see `open`): newer than any hand edit. */
  readonly #saved = new Set<string>();
  /**
   * The held paths saved by hand while a step ran, outside its files (see `holdSaved`): taken back only from an undo
   * whose call's run wrote there, not from one writing past its call's files (a log each undo appends to).
   */
  readonly #outside = new Set<string>();
  /** What the held paths held as the running step began (see `open`); null between steps. */
  #window: Map<string, Held | undefined> | null = null;

  constructor(
    private readonly dir: string,
    private readonly warn: (message: string, error: unknown) => void,
  ) {}

  /** What `paths` hold now (undefined: something not kept, as a link or a folder, or unreadable). */
  read(paths: Iterable<string>): Map<string, Held | undefined> {
    const out = new Map<string, Held | undefined>();
    for (const path of paths) out.set(path, this.#readOne(path));
    return out;
  }

  /**
   * After an undo: the paths it changed from `before` (read as it began) hold the hand edit it put back, one held
   * already included: its call's run found a hand edit there too, made before the one held (which may be no more than
   * what that call left there, drift as the hand edit under it was), and the rewind goes back before it.
   */
  hold(before: ReadonlyMap<string, Held | undefined>): PutBacks {
    const made: PutBacks = {};
    for (const [path, was] of before) {
      if (this.#saved.has(path)) continue;
      const now = this.#readOne(path);
      if (now === undefined || same(was, now)) continue;
      this.#held.set(path, now);
      made[path] = fingerprint(now);
    }
    return made;
  }

  /**
   * Holds the put-backs a stopped move made (`made`, from its journal) that the files still hold as it left them: a
   * file changed since (by hand, by a call) is no longer that hand edit, and is not held.
   */
  holdIfAsLeft(made: PutBacks): void {
    for (const path of this.asLeft(made)) this.#held.set(path, this.#readOne(path)!);
  }

  /** The paths of `made` the files still hold just as put back (see `holdIfAsLeft`). */
  asLeft(made: PutBacks): string[] {
    return Object.entries(made).flatMap(([path, print]) => {
      const now = this.#readOne(path);
      return now !== undefined && printed(now, print) ? [path] : [];
    });
  }

  /** Whether `path` holds a file of file id `id` now (see file-id.ts). */
  holdsId(path: string, id: string): boolean {
    const now = this.#readOne(path);
    return !!now && idOf(now) === id;
  }

  /** Holds `paths` as they are now (a resumed move: the hand edits its finished undos put back). */
  holdAsIs(paths: Iterable<string>): void {
    for (const [path, now] of this.read(paths)) if (now !== undefined) this.#held.set(path, now);
  }

  /** Holds `paths` as they are now, as the user's own saves during the move (changed outside a step's files). */
  holdSaved(paths: Iterable<string>): void {
    for (const [path, now] of this.read(paths)) {
      if (now === undefined) continue;
      this.#held.set(path, now);
      this.#saved.add(path);
      this.#outside.add(path);
    }
  }

  /**
   * Just before a step's handler runs: what the held paths hold now is read as its window's start. A held file changed
   * since the last step is the user's save (nothing of the move runs between steps): it stays, held as it is now.
   */
  open(): void {
    this.#window = new Map();
    for (const [path, held] of this.#held) {
      const now = this.#readOne(path);
      this.#window.set(path, now);
      if (now !== undefined && !same(held, now)) {
        this.#held.set(path, now);
        this.#saved.add(path);
      }
    }
  }

  /** Whether `path` changed while the running step ran (from its window's start to now, `now`). */
  #changedInWindow(path: string, now: Held | undefined): boolean {
    return now !== undefined && !same(this.#window?.get(path), now);
  }

  /**
   * After a step of a call without recorded paths, or a replay: those it wrote are no longer held (that may be its
   * own effect; a replay's is its call's, applied again).
   */
  release(): void {
    for (const path of [...this.#held.keys()]) if (this.#changedInWindow(path, this.#readOne(path))) this.#held.delete(path);
    this.#window = null;
  }

  /**
   * After an undo of a call without recorded paths (`recordToolCall`'s): the user's saves during the move (see `open`,
   * `holdSaved`) it wrote over are written back, as `keep` does (newer than anything an undo puts back); so are hand
   * edits put back in a file its arguments name that holds other than what it was recorded over (`left`, file ids):
   * made after it, never its own effect. The other held paths it wrote are no longer held, as `release` leaves them
   * (that may be its own effect).
   */
  keepSaved(left: ReadonlyMap<string, string | null> = new Map()): void {
    for (const [path, held] of [...this.#held]) {
      const now = this.#readOne(path);
      if (!this.#changedInWindow(path, now)) continue;
      if (!this.#saved.has(path) && !madeAfter(held, left.get(path))) {
        this.#held.delete(path);
        continue;
      }
      if (same(held, now)) continue;
      try {
        this.#write(path, held);
      } catch (error) {
        this.warn(`forkpoint: a save made during the move in ${join(this.dir, path)} could not be written back after a later step`, error);
      }
    }
    this.#window = null;
  }

  /**
   * While an undo of a call without recorded paths ran (before `keepSaved`): the held paths it wrote that `keepSaved`
   * writes back, taking its write there back (what it put back may be a hand edit made before its call, see
   * recorded-over.ts).
   */
  writtenBack(left: ReadonlyMap<string, string | null> = new Map()): string[] {
    const out: string[] = [];
    for (const [path, held] of this.#held) {
      const now = this.#readOne(path);
      if (!this.#changedInWindow(path, now) || same(held, now)) continue;
      if (this.#saved.has(path) || madeAfter(held, left.get(path))) out.push(path);
    }
    return out;
  }

  /** The file ids of what `paths` (held) hold as held (null: a deletion); paths not held are left out. */
  heldIds(paths: Iterable<string>): Map<string, string | null> {
    const out = new Map<string, string | null>();
    for (const path of paths) {
      const held = this.#held.get(path);
      if (held !== undefined) out.set(path, held === null ? null : idOf(held));
    }
    return out;
  }

  /** No longer holds `paths`: what a step wrote there stays (see `OwnChanges.keepWritten`). */
  drop(paths: Iterable<string>): void {
    for (const path of paths) {
      this.#held.delete(path);
      this.#saved.delete(path);
      this.#outside.delete(path);
    }
  }

  /**
   * After an undo of a call with recorded paths: the hand edits put back that changed while it ran are written back,
   * wherever it wrote (beyond its call's recorded paths too); but those in `own`, where it puts back an older hand edit its
   * call's run found (see `hold`), unless the user saved there since: a save made during the move is newer than any
   * hand edit an undo finds (see `open`). A save held by `holdSaved` only where the undo's call's run wrote (`paths`).
   */
  keep(own: ReadonlySet<string>, paths: ReadonlySet<string>): void {
    for (const [path, held] of this.#held) {
      if (own.has(path) && !this.#saved.has(path)) continue;
      if (this.#outside.has(path) && !paths.has(path)) continue;
      const now = this.#readOne(path);
      if (!this.#changedInWindow(path, now) || same(held, now)) continue;
      try {
        this.#write(path, held);
      } catch (error) {
        this.warn(`forkpoint: a hand edit put back in ${join(this.dir, path)} could not be written back after a later step`, error);
      }
    }
    this.#window = null;
  }

  /**
   * Of `paths` ("all": any), the held ones holding the user's own save during the move as it is on disk (see `open`,
   * `holdSaved`), or changed since last held (a save between steps): a replay writing there would overwrite it unsaved.
   */
  savedIn(paths: ReadonlySet<string> | "all"): string[] {
    const out: string[] = [];
    for (const [path, held] of this.#held) {
      if (paths !== "all" && !paths.has(path)) continue;
      const now = this.#readOne(path);
      if (now !== undefined && (this.#saved.has(path) || !same(held, now))) out.push(path);
    }
    return out;
  }

  /**
   * After a move's files step: the held paths it wrote (drift saved first, with `force`) hold no unsaved hand edit any
   * more; they are no longer held.
   */
  restored(): void {
    for (const [path, held] of [...this.#held]) {
      if (same(held, this.#readOne(path))) continue;
      this.#held.delete(path);
      this.#saved.delete(path);
      this.#outside.delete(path);
    }
  }

  #full(path: string): string {
    return join(this.dir, ...path.split("/"));
  }

  #readOne(path: string): Held | undefined {
    const full = this.#full(path);
    try {
      const st = lstatSync(full);
      return st.isFile() ? { content: readFileSync(full), mode: st.mode & 0o777 } : undefined;
    } catch (error) {
      return codeOf(error) === "ENOENT" || codeOf(error) === "ENOTDIR" ? null : undefined;
    }
  }

  /** Written beside the file, then renamed into place: a link in the way is replaced, never written through. */
  #write(path: string, held: Held): void {
    const full = this.#full(path);
    if (held === null) return rmSync(full, { force: true });
    mkdirSync(dirname(full), { recursive: true });
    const staged = join(dirname(full), stagedName(basename(full), process.pid));
    writeStaged(staged, held.content, held.mode);
    chmodSync(staged, held.mode);
    renameSync(staged, full);
  }
}

const fingerprint = (held: Held): string | null =>
  held === null ? null : `${held.mode.toString(8)}:${createHash("sha256").update(held.content).digest("hex")}`;

/** Whether `held` is the put-back `print` names (a fingerprint, or a file id: see `byFileId`). */
const printed = (held: Held, print: string | null): boolean =>
  print?.startsWith(FILE_ID) ? held !== null && idOf(held) === print.slice(FILE_ID.length) : fingerprint(held) === print;

/**
 * Whether `held` (a hand edit put back) is content a recorded call was not recorded over (`left`, its file id there;
 * undefined: a file its arguments do not name): made after it. A deletion keeps no content, as the drift checks weigh it.
 */
const madeAfter = (held: Held, left: string | null | undefined): boolean =>
  left !== undefined && held !== null && (left === null || contentOf(idOf(held)) !== contentOf(left));

const idOf = (held: { content: Buffer; mode: number }): string =>
  fileIdOf(createHash("sha256").update(held.content).digest("hex"), executableMode(held.mode));

const same = (a: Held | undefined, b: Held | undefined): boolean =>
  a === b || (!!a && !!b && a.mode === b.mode && a.content.equals(b.content));
