// The watcher's worker thread: an inotify watch (fs.watch) on every captured directory of a workspace, recording the
// paths events name until the owner asks what changed. A worker has its own event loop, and so its own inotify queue:
// every event on it is this watcher's, so that it can count them (see watch.ts), and it keeps reading events while
// the owner's thread is busy. Every `walkMs` it also walks the watched directories, stat only, for changes that make
// no event (see `walk`). It runs from this function's source text (`watcherSource`): the function uses nothing from
// outside its body but what it is given.
import { makeRules } from "./rules.js";

/** What the worker is given (workerData). */
export interface WatchData {
  root: string;
  exclude: string[];
  gitignore: boolean;
  /** Absolute paths whose events are not recorded (the database's own files). */
  skip: string[];
  /** A private directory the owner creates cookie files in: their events mark how far the queue was read. */
  cookieDir: string;
  /** Where `require` finds the `ignore` package. */
  ignorePath: string;
  /** How often (ms) the watched directories are walked, stat only, for changes that make no event; 0: never. */
  walkMs: number;
}

/** What the worker posts: its watches are in place (or could not be), or what changed up to a cookie. */
export type WatchMessage =
  | { type: "ready"; failed: string | null; dirs: number }
  | {
      type: "sync";
      n: number;
      /** Paths an event named since the last sync. */
      dirty: string[];
      /** Directories created or moved in since: walked whole. */
      trees: string[];
      /** Directories whose own names must be listed again (an event without a usable name). */
      relist: string[];
      /** Events since the last sync (all of this thread's queue). */
      events: number;
      failed: string | null;
      rulesChanged: boolean;
      /** Stat walks finished, and the paths they found changed, since the worker started (not reset by a rescan). */
      walks: number;
      walkFound: number;
    };

/* eslint-disable */
function watcherMain(
  workerThreads: typeof import("node:worker_threads"),
  fs: typeof import("node:fs"),
  isUtf8: (b: Buffer) => boolean,
  rulesOf: typeof makeRules,
  requireFn: (id: string) => unknown,
): void {
  const { parentPort, workerData } = workerThreads;
  const data = workerData as WatchData;
  const ignoreFactory = requireFn(data.ignorePath) as Parameters<typeof makeRules>[3];
  const skip = new Set(data.skip);
  // As ignore-file.ts reads them (this function runs from its source text): a link named .gitignore is not followed.
  const readText = (p: string) => {
    try {
      if (!fs.lstatSync(p, { throwIfNoEntry: false })?.isFile()) return null;
      return fs.readFileSync(p, "utf8");
    } catch {
      return null;
    }
  };
  const join = (d: string, n: string) => (d === "" ? n : `${d}/${n}`);
  const full = (rel: string) => (rel === "" ? data.root : `${data.root}/${rel}`);
  let rules = rulesOf(data.root, data.exclude, data.gitignore, ignoreFactory, readText);
  const watchers = new Map<string, import("node:fs").FSWatcher>();
  let dirty = new Set<string>();
  let trees = new Set<string>();
  let relist = new Set<string>();
  let events = 0;
  let failed: string | null = null;
  let rulesChanged = false;
  let answeredUpTo = 0;
  /** Per watched directory, each file's stat data (ctime, inode, size) when the last walk looked. */
  let seen = new Map<string, Map<string, string>>();
  /** A file the last walk did not see is a change when its ctime is at least this (ns): see `walk`. */
  let seenSince = 0n;
  /** Bumped by every start: a walk of an earlier one stops. */
  let run = 0;
  let walkTimer: ReturnType<typeof setTimeout> | null = null;
  let walks = 0;
  let walkFound = 0;

  const unwatch = (rel: string) => {
    for (const [r, w] of watchers) {
      if (r === rel || r.startsWith(`${rel}/`)) {
        w.close();
        watchers.delete(r);
      }
    }
  };

  const watchTree = (rel: string) => {
    if (failed !== null) return;
    if (!watchers.has(rel)) {
      let w: import("node:fs").FSWatcher;
      try {
        w = fs.watch(full(rel), { persistent: false, encoding: "buffer" }, (type, name) => onEvent(rel, type, name as Buffer | null));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOENT" || code === "ENOTDIR") return; // gone already: its parent's event says so
        failed = `watching ${full(rel)}: ${(error as Error).message}`;
        return;
      }
      w.on("error", (error: Error) => {
        failed ??= `watching ${full(rel)}: ${error.message}`;
      });
      watchers.set(rel, w);
    }
    let list: import("node:fs").Dirent[];
    try {
      list = fs.readdirSync(full(rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const d of list) {
      if (!d.isDirectory()) continue;
      const child = join(rel, d.name);
      if (!rules.ignored(child, true)) watchTree(child);
    }
  };

  const onEvent = (rel: string, type: string, name: Buffer | null) => {
    events++;
    if (name === null || name === undefined || !isUtf8(name)) {
      relist.add(rel);
      return;
    }
    const n = name.toString();
    const p = join(rel, n);
    if (skip.has(full(p))) return;
    if (data.gitignore && n === ".gitignore") rulesChanged = true;
    // A watched directory's own removal is reported under its own name: its parent lists it again.
    if (rel !== "" && n === rel.slice(rel.lastIndexOf("/") + 1)) relist.add(rel);
    dirty.add(p);
    if (type !== "rename") return;
    // Created, deleted or moved: a directory at this name is watched afresh, and walked whole by the next refresh.
    if (watchers.has(p)) unwatch(p);
    let isDirectory = false;
    try {
      isDirectory = fs.lstatSync(full(p)).isDirectory();
    } catch {
      isDirectory = false;
    }
    if (isDirectory && !rules.ignored(p, true)) {
      watchTree(p);
      trees.add(p);
    }
  };

  /**
   * This thread's CPU time (ms) where Node tells it (23.9 on), else the wall clock: what a walk's pause is measured
   * against, so that a walk delayed by a busy machine does not hold back the next one.
   */
  const threadCpu = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage;
  const busyNow = () => (threadCpu ? ((u) => (u.user + u.system) / 1000)(threadCpu.call(process)) : performance.now());

  /** Now, less a margin for the kernel's coarse file timestamps, in ns. */
  const sinceNow = () => BigInt(Date.now() - 2000) * 1_000_000n;

  const walkFoundPath = (p: string) => {
    if (skip.has(full(p)) || rules.ignored(p, false) || dirty.has(p)) return;
    dirty.add(p);
    walkFound++;
  };

  const scheduleWalk = (delay: number) => {
    if (walkTimer !== null) clearTimeout(walkTimer);
    walkTimer = data.walkMs > 0 ? setTimeout(walk, delay) : null;
  };

  /**
   * A write through a hard link made from outside the workspace, and the link itself, make no event on any watched
   * directory: such a change is found by this walk, every `walkMs`, as git's fsmonitor and Watchman users find it by
   * their next full scan. Each watched directory is listed and its files lstat'ed (never read); a file is named as an
   * event would name it when its stat data changed since the last walk, or when its ctime is at least when the walk
   * before began (the watches' start, for the first). The second covers what the last walk did not see (the first
   * walk, a directory watched since: the owner looked at such a file after that time, so a change it missed has a
   * later ctime) and a second write within the kernel's timestamp tick of the first. It runs in slices, so that syncs
   * are answered meanwhile, and waits at least 200 times its own CPU time between walks (at most 0.5% of a core).
   */
  const walk = () => {
    walkTimer = null;
    const mine = run;
    const since = seenSince;
    const startedAt = sinceNow();
    const next = new Map<string, Map<string, string>>();
    const dirs = [...watchers.keys()];
    let i = 0;
    let busyMs = 0;
    const slice = () => {
      if (mine !== run) return; // started again: the new start walks afresh
      const t0 = busyNow();
      for (let files = 0; i < dirs.length && files < 2000;) {
        const rel = dirs[i++]!;
        let list: import("node:fs").Dirent[];
        try {
          list = fs.readdirSync(full(rel), { withFileTypes: true });
        } catch {
          continue; // gone: its parent's event says so
        }
        const before = seen.get(rel);
        const now = new Map<string, string>();
        for (const d of list) {
          if (!d.isFile()) continue;
          files++;
          const p = join(rel, d.name);
          let st: import("node:fs").BigIntStats | undefined;
          try {
            st = fs.lstatSync(full(p), { bigint: true, throwIfNoEntry: false });
          } catch {
            st = undefined;
          }
          if (st === undefined) continue;
          const key = `${st.ctimeNs}:${st.ino}:${st.size}`;
          now.set(d.name, key);
          const old = before?.get(d.name);
          if ((old !== undefined && old !== key) || st.ctimeNs >= since) walkFoundPath(p);
        }
        if (before !== undefined) for (const name of before.keys()) if (!now.has(name)) walkFoundPath(join(rel, name));
        next.set(rel, now);
      }
      busyMs += busyNow() - t0;
      if (i < dirs.length) return void setImmediate(slice);
      seen = next;
      seenSince = startedAt;
      walks++;
      scheduleWalk(Math.max(data.walkMs, busyMs * 200));
    };
    slice();
  };

  const start = () => {
    for (const r of [...watchers.keys()]) unwatch(r);
    run++;
    seen = new Map();
    seenSince = sinceNow(); // before any watch: the owner walks (or synced) after this
    failed = null;
    rulesChanged = false;
    rules = rulesOf(data.root, data.exclude, data.gitignore, ignoreFactory, readText);
    dirty = new Set();
    trees = new Set();
    relist = new Set();
    events = 0;
    watchTree("");
    if (failed !== null) for (const r of [...watchers.keys()]) unwatch(r);
    parentPort!.postMessage({ type: "ready", failed, dirs: watchers.size } satisfies WatchMessage);
    if (failed === null) scheduleWalk(data.walkMs);
  };

  fs.watch(data.cookieDir, { persistent: false }, (_type, name) => {
    events++;
    const m = /^c(\d+)$/.exec(String(name));
    if (!m) return;
    // The cookie's later events (closed, removed) must not answer again: each answer empties the paths held.
    if (Number(m[1]) <= answeredUpTo) return;
    answeredUpTo = Number(m[1]);
    parentPort!.postMessage({
      type: "sync",
      n: Number(m[1]),
      dirty: [...dirty],
      trees: [...trees],
      relist: [...relist],
      events,
      failed,
      rulesChanged,
      walks,
      walkFound,
    } satisfies WatchMessage);
    dirty = new Set();
    trees = new Set();
    relist = new Set();
    events = 0;
  });
  parentPort!.on("message", (msg: { type: string }) => {
    if (msg.type === "rescan") start();
  });
  start();
}
/* eslint-enable */

/**
 * The worker's program: the rules' and the watcher's functions from their source text (as whatever compiled them
 * left it), run with what they need. `__name`: a helper some compilers' output calls.
 */
export const watcherSource = `"use strict";
const __name = (f) => f;
const makeRules = ${makeRules.toString()};
const watcherMain = ${watcherMain.toString()};
watcherMain(require("node:worker_threads"), require("node:fs"), require("node:buffer").isUtf8, makeRules, require);
`;
