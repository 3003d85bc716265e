// The watcher's worker thread: an inotify watch (fs.watch) on every captured directory of a workspace, recording the
// paths events name until the owner asks what changed. A worker has its own event loop, and so its own inotify queue:
// every event on it is this watcher's, so that it can count them (see watch.ts), and it keeps reading events while
// the owner's thread is busy. It runs from this function's source text (`watcherSource`): the function uses nothing
// from outside its body but what it is given.
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
  const readText = (p: string) => {
    try {
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

  const start = () => {
    for (const r of [...watchers.keys()]) unwatch(r);
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
