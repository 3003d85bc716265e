// Knowing what changed in a workspace without walking it, as git's fsmonitor and Watchman do: a worker thread watches
// every captured directory (inotify, through fs.watch). Before its changes are used, a cookie file is created in a
// private watched directory: inotify queues events in order, so once the worker has seen the cookie's event it has
// seen every change made before it. Whenever changes may have been missed, the answer is "not trusted" and the caller
// walks the tree: on a platform or file system where events are not known to be complete, when the kernel's queue may
// have overflowed (Node does not report an overflow: events are counted instead), when a watch failed, when a
// .gitignore changed, when the worker does not answer, when the root directory was deleted or moved away (its
// watches stay on the old directory; an open descriptor keeps the old inode's number from being reused). A change
// that makes no event at all (a write through a hard link made from outside the workspace) is found by the worker's
// stat walk, every `walkInterval()` (see watch-worker.ts).
import {
  closeSync,
  fstatSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  statfsSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import type { WatchData, WatchMessage } from "./watch-worker.js";
import { watcherSource } from "./watch-worker.js";

/**
 * File systems whose changes inotify reports, whoever makes them (statfs magic numbers): local ones. On a network
 * file system another machine's writes make no event, so a workspace there is walked every time.
 */
const LOCAL_FILE_SYSTEMS = new Set([
  0xef53, // ext2/3/4
  0x58465342, // xfs
  0x9123683e, // btrfs
  0x01021994, // tmpfs
  0x794c7630, // overlayfs
  0x2fc12fc1, // zfs
  0xf2f52010, // f2fs
  0x52654973, // reiserfs
  0x3153464a, // jfs
  0xca451a4e, // bcachefs
  0x858458f6, // ramfs
]);

/** Whether events on the file system holding `path` can be trusted to be complete. */
export function watchableFileSystem(path: string): boolean {
  if (process.platform !== "linux") return false;
  try {
    return LOCAL_FILE_SYSTEMS.has(statfsSync(path).type);
  } catch {
    return false;
  }
}

/**
 * Events counted over two syncs at or above this many may have overflowed the kernel's queue. An overflow needs the
 * queue full (`max_queued_events` unread events, all of which the worker then reads); those events all came after the
 * sync before the last (the worker had read everything up to it), so fewer than that over the last two intervals means
 * none was lost. Half of it, for margin (events of watches just removed are dropped unseen).
 */
const OVERFLOW_EVENTS = (() => {
  try {
    return Math.floor(Number(readFileSync("/proc/sys/fs/inotify/max_queued_events", "utf8").trim()) / 2) || 8192;
  } catch {
    return 8192;
  }
})();
/**
 * How often the worker walks the watched directories, stat only, by default: a minute. That bounds how long a change
 * that makes no event goes unseen; a walk of 30,000 files (2,300 directories) takes 0.2–0.25 s of CPU here (0.3–0.5 s
 * of the worker's time under load), about 0.4% of a core (a larger tree's walks wait longer: see watch-worker.ts).
 */
export const DEFAULT_WALK_MS = 60_000;

/** The stat walk's interval: FORKPOINT_WATCH_WALK_MS (milliseconds; 0: never) when set to a whole number, else the default. */
export function walkInterval(env: NodeJS.ProcessEnv = process.env): number {
  const set = env.FORKPOINT_WATCH_WALK_MS?.trim();
  return set && /^\d+$/.test(set) ? Number(set) : DEFAULT_WALK_MS;
}

/** How long a sync waits for its cookie's event before it gives up (and the caller walks). */
const SYNC_TIMEOUT_MS = 10_000;

/** Where the worker finds the `ignore` package (resolved when a watcher first starts), or null if it cannot. */
let ignorePath: string | null | undefined;
function ignoreModulePath(): string | null {
  if (ignorePath === undefined) {
    try {
      ignorePath = createRequire(import.meta.url).resolve("ignore");
    } catch {
      ignorePath = null; // bundled without its dependencies' files: no watcher, every scan walks
    }
  }
  return ignorePath;
}

/** This process's directory for cookie files (one subdirectory per watcher), removed when the process exits. */
let processCookies: string | null = null;

function cookieParent(): string {
  if (processCookies !== null) return processCookies;
  removeStaleCookies();
  const dir = mkdtempSync(join(tmpdir(), `forkpoint-watch-${process.pid}-`));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  return (processCookies = dir);
}

/** Removes the cookie directories of processes that died without removing theirs (killed, or crashed). */
function removeStaleCookies(): void {
  try {
    for (const name of readdirSync(tmpdir())) {
      const pid = Number(/^forkpoint-watch-(\d+)-/.exec(name)?.[1]);
      if (!pid || pid === process.pid || alive(pid)) continue;
      rmSync(join(tmpdir(), name), { recursive: true, force: true });
    }
  } catch {
    // best effort: a leftover only takes a directory entry
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** What changed since the last sync, and whether it can be trusted to be everything. */
export interface Synced {
  trusted: boolean;
  dirty: string[];
  trees: Set<string>;
  relist: string[];
}

const UNTRUSTED: Synced = { trusted: false, dirty: [], trees: new Set(), relist: [] };

export class Watch {
  /** The watching thread (a test stops it to check that its death is survived). */
  readonly worker: Worker;
  readonly #cookieDir: string;
  readonly #root: string;
  /** The root directory its watches were made on, held open so that a new directory at that path has another inode. */
  #rootFd: number | null = null;
  #n = 0;
  #previousEvents = 0;
  #walks = 0;
  #walkFound = 0;
  #failed: string | null = null;
  #closed = false;
  /** The worker thread ended (an error, out of heap): nothing answers a rescan, so none is asked of it. */
  #exited = false;
  #ready: Promise<boolean>;
  #onReady: ((ok: boolean) => void) | null = null;
  readonly #waiting = new Map<number, (m: WatchMessage & { type: "sync" }) => void>();

  constructor(root: string, exclude: string[], gitignore: boolean, skip: readonly string[]) {
    const ignore = ignoreModulePath();
    if (ignore === null) throw new Error("the ignore package cannot be found");
    this.#cookieDir = mkdtempSync(join(cookieParent(), "w"));
    this.#root = root;
    this.#holdRoot();
    const workerData: WatchData = {
      root,
      exclude,
      gitignore,
      skip: [...skip],
      cookieDir: this.#cookieDir,
      ignorePath: ignore,
      walkMs: walkInterval(),
    };
    // It holds a watch per directory, the paths named since the last sync and each file's stat data for its walk
    // (18–23 MB of heap at 30,000 files while a walk runs): a small heap.
    this.worker = new Worker(watcherSource, {
      eval: true,
      workerData,
      resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 256 },
    });
    this.worker.unref();
    this.#ready = this.#nextReady();
    this.worker.on("message", (m: WatchMessage) => {
      if (m.type === "ready") {
        this.#failed = m.failed;
        this.#onReady?.(m.failed === null);
      } else this.#waiting.get(m.n)?.(m);
    });
    const lost = (why: string) => {
      this.#exited = true;
      this.#failed ??= why;
      this.#onReady?.(false);
      for (const resolve of this.#waiting.values())
        resolve({
          type: "sync",
          n: -1,
          dirty: [],
          trees: [],
          relist: [],
          events: 0,
          failed: why,
          rulesChanged: false,
          walks: 0,
          walkFound: 0,
        });
    };
    this.worker.on("error", (error) => lost(`the watcher stopped: ${error.message}`));
    this.worker.on("exit", () => lost("the watcher exited"));
  }

  #holdRoot(): void {
    if (this.#rootFd !== null) closeSync(this.#rootFd);
    this.#rootFd = null;
    try {
      this.#rootFd = openSync(this.#root, "r");
    } catch {
      this.#rootFd = null; // gone: every sync is untrusted until a rescan finds it
    }
  }

  /** Whether the directory at the root's path is still the one its watches were made on. */
  #sameRoot(): boolean {
    if (this.#rootFd === null) return false;
    try {
      const held = fstatSync(this.#rootFd, { bigint: true });
      const now = statSync(this.#root, { bigint: true });
      return held.dev === now.dev && held.ino === now.ino;
    } catch {
      return false;
    }
  }

  #nextReady(): Promise<boolean> {
    return new Promise<boolean>((resolve) => (this.#onReady = resolve));
  }

  /** Whether its watches are in place (false: they could not be, e.g. the inotify watch limit). */
  ready(): Promise<boolean> {
    return this.#ready;
  }

  /** Why it cannot be used, or null. */
  get failed(): string | null {
    return this.#closed ? "closed" : this.#failed;
  }

  /** The worker's stat walks finished, and the paths they named, as of the last sync (for tests and diagnostics). */
  get walks(): { done: number; found: number } {
    return { done: this.#walks, found: this.#walkFound };
  }

  /** What changed since the last sync (see the file's comment for when it is not trusted). */
  async sync(): Promise<Synced> {
    if (!(await this.#ready) || this.failed !== null) return UNTRUSTED;
    const n = ++this.#n;
    let timer: NodeJS.Timeout | undefined;
    const answered = new Promise<(WatchMessage & { type: "sync" }) | null>((resolve) => {
      this.#waiting.set(n, resolve);
      timer = setTimeout(() => resolve(null), SYNC_TIMEOUT_MS).unref();
    });
    const cookie = join(this.#cookieDir, `c${n}`);
    try {
      writeFileSync(cookie, "");
    } catch {
      clearTimeout(timer);
      this.#waiting.delete(n);
      return UNTRUSTED;
    }
    const m = await answered;
    clearTimeout(timer);
    this.#waiting.delete(n);
    rmSync(cookie, { force: true });
    if (m === null) {
      this.#failed = "the watcher did not answer in time";
      return UNTRUSTED;
    }
    if (m.n >= 0) {
      this.#walks = m.walks;
      this.#walkFound = m.walkFound;
    }
    const events = this.#previousEvents + m.events;
    this.#previousEvents = m.events;
    const trusted = m.failed === null && !m.rulesChanged && events < OVERFLOW_EVENTS && this.#sameRoot();
    return { trusted, dirty: m.dirty, trees: new Set(m.trees), relist: m.relist };
  }

  /** Drops every watch and makes them again (after changes were missed); resolves with whether they are in place. */
  rescan(): Promise<boolean> {
    if (this.#closed || this.#exited) return Promise.resolve(false);
    this.#failed = null;
    this.#previousEvents = 0;
    this.#holdRoot();
    this.#ready = this.#nextReady();
    this.worker.postMessage({ type: "rescan" });
    return this.#ready;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    void this.worker.terminate();
    if (this.#rootFd !== null) closeSync(this.#rootFd);
    this.#rootFd = null;
    rmSync(this.#cookieDir, { recursive: true, force: true });
  }
}
