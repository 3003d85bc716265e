// The file-system side of workspaces: reading a directory into a snapshot (path → SHA-256 of its content), making the
// directory match a snapshot again, and the unified diff between two snapshots.
import { isUtf8 } from "node:buffer";
import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, relative, sep } from "node:path";
import { PayloadTooLargeError, ValidationError } from "../../models/errors.js";
import { sha256 } from "../integrity/hashes.js";

// Loaded on first use: only sessions with a workspace need them, and every process would otherwise pay for them
// (ignore alone adds about 6 MB of RSS when loaded).
const load = createRequire(import.meta.url);
let ignoreFactory: typeof import("ignore") | undefined;
let diffModule: typeof import("diff") | undefined;
const ignore = () => (ignoreFactory ??= load("ignore") as typeof import("ignore"))();
const textPatch = (from: string, to: string, before: string, after: string): string =>
  (diffModule ??= load("diff") as typeof import("diff")).createTwoFilesPatch(from, to, before, after, "", "", { context: 3 });

/** One file of a snapshot. */
export interface SnapshotFile {
  hash: string;
  content: Buffer;
}

/** A directory's files, by path relative to it (always with "/"), in path order. */
export type Snapshot = Map<string, SnapshotFile>;

/** A snapshot's manifest: `{ path: content hash }` with sorted keys, and the hash that addresses it. */
export interface Manifest {
  files: Record<string, string>;
  body: string;
  hash: string;
}

/**
 * Reads every regular file under `dir` that `exclude` (.gitignore patterns) and `skip` (absolute paths, e.g. the
 * database itself) leave in. Symbolic links are not followed. Each file is at most `maxBytes`.
 */
export function scanWorkspace(dir: string, exclude: readonly string[], skip: ReadonlySet<string>, maxBytes: number): Snapshot {
  const ig = ignore().add([...exclude]);
  const found: [string, SnapshotFile][] = [];
  const walk = (at: string) => {
    // Names read as bytes: one that is not UTF-8 (shown with U+FFFD) may be excluded, else it is refused by name.
    for (const entry of readdirSync(at, { withFileTypes: true, encoding: "buffer" })) {
      const full = join(at, entry.name.toString());
      const rel = relative(dir, full).split(sep).join("/");
      if (entry.isDirectory()) {
        if (!ig.ignores(`${rel}/`)) walk(textName(entry.name, rel, full));
      } else if (entry.isFile() && !skip.has(full) && !ig.ignores(rel)) {
        textName(entry.name, rel, full);
        const size = lstatSync(full).size;
        if (size > maxBytes)
          throw new PayloadTooLargeError(`workspace file ${rel}`, `is ${size} bytes, over the limit of ${maxBytes}; exclude it`, maxBytes);
        const content = readFileSync(full);
        found.push([rel, { hash: sha256(content), content }]);
      }
    }
  };
  walk(dir);
  found.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return new Map(found);
}

/** `full`, when the name it ends with is UTF-8; else a MALFORMED_TEXT error: a manifest stores paths as text. */
function textName(name: Buffer, rel: string, full: string): string {
  if (isUtf8(name)) return full;
  throw new ValidationError(
    `workspace file ${rel}`,
    "has a name that is not UTF-8, which cannot be stored as text: rename or exclude it",
    "MALFORMED_TEXT",
  );
}

/** The manifest of a snapshot (or of `{ path: hash }` already known). */
export function manifestOf(files: Snapshot | Record<string, string>): Manifest {
  const entries = files instanceof Map ? [...files].map(([p, f]) => [p, f.hash] as const) : Object.entries(files);
  const sorted: Record<string, string> = {};
  for (const [p, h] of [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) sorted[p] = h;
  const body = JSON.stringify(sorted);
  return { files: sorted, body, hash: sha256(body) };
}

/** Paths whose content differs between two manifests (added, changed or removed), in path order. */
export function changedPaths(a: Record<string, string>, b: Record<string, string>): string[] {
  const paths = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...paths].filter((p) => a[p] !== b[p]).sort();
}

/**
 * Why `paths` cannot be written under `dir` (a symbolic link, or a file where a directory must be, anywhere on the
 * way), or null. Writing through a link could change a file outside the workspace.
 */
export function assertRestorable(dir: string, paths: readonly string[]): string | null {
  const seen = new Map<string, "dir" | "file" | "link" | "none">();
  const kind = (full: string) => {
    let k = seen.get(full);
    if (k === undefined) {
      try {
        const st = lstatSync(full);
        k = st.isSymbolicLink() ? "link" : st.isDirectory() ? "dir" : "file";
      } catch {
        k = "none";
      }
      seen.set(full, k);
    }
    return k;
  };
  for (const path of paths) {
    const parts = path.split("/");
    if (parts.some((p) => p === "" || p === "." || p === "..")) return `${path} is not a plain relative path`;
    let at = dir;
    for (let i = 0; i < parts.length; i++) {
      at = join(at, parts[i]!);
      const k = kind(at);
      if (k === "none") break;
      if (k === "link") return `${relative(dir, at)} is a symbolic link`;
      if (i < parts.length - 1 && k !== "dir") return `${relative(dir, at)} is a file where ${path} needs a directory`;
      if (i === parts.length - 1 && k === "dir") return `${path} is a directory`;
    }
  }
  return null;
}

/** Restores stage each file beside its destination (`<file>.forkpoint-<pid>.tmp`), then rename it into place. */
const STAGED_SUFFIX = ".forkpoint-";
/** The longest file name most file systems take, in bytes. */
const MAX_NAME_BYTES = 255;

/**
 * The name a restore by `pid` stages `name` under: `<name>.forkpoint-<pid>.tmp`, or, when that would be too long a
 * file name, `.forkpoint-<pid>-<16 hex of the name's SHA-256>.tmp`.
 */
function stagedName(name: string, pid: number): string {
  const long = `${name}${STAGED_SUFFIX}${pid}.tmp`;
  return Buffer.byteLength(long) <= MAX_NAME_BYTES ? long : `${STAGED_SUFFIX}${pid}-${sha256(name).slice(0, 16)}.tmp`;
}

/**
 * Removes the files that restores run by `pids` staged beside `paths` and never renamed into place (their process
 * died): forkpoint's own leftovers. A name that is itself one of `tracked` is the user's file, and is kept.
 * Returns what it removed (paths relative to `dir`).
 */
export function removeStaged(dir: string, paths: string[], pids: readonly number[], tracked: ReadonlySet<string>): string[] {
  const byFolder = new Map<string, Set<string>>();
  for (const path of paths) {
    const full = join(dir, ...path.split("/"));
    const names = byFolder.get(dirname(full)) ?? new Set<string>();
    names.add(basename(full));
    byFolder.set(dirname(full), names);
  }
  const removed: string[] = [];
  for (const [folder, names] of byFolder) {
    let found: Set<string>;
    try {
      found = new Set(readdirSync(folder));
    } catch {
      continue; // no such folder: nothing was staged there
    }
    for (const name of [...names].flatMap((n) => pids.map((pid) => stagedName(n, pid)))) {
      if (!found.has(name)) continue;
      const path = relative(dir, join(folder, name)).split(sep).join("/");
      if (tracked.has(path)) continue;
      rmSync(join(folder, name), { force: true });
      removed.push(path);
    }
  }
  return removed;
}

/**
 * Makes `dir` hold exactly `target`'s files (of those `current`, a fresh scan, holds). Every new content is first
 * written beside its place under a temporary name: if one fails (disk full, permissions), the temporary files are
 * removed and the directory is as it was. Then deletes (first, so a name that differs only in case on a
 * case-insensitive file system is not deleted after being written), then renames into place.
 * Check `assertRestorable` first.
 */
export function restoreWorkspace(
  dir: string,
  current: Snapshot,
  target: Record<string, string>,
  content: (hash: string) => Buffer,
): { written: string[]; deleted: string[] } {
  const staged: { path: string; full: string; temp: string }[] = [];
  try {
    for (const [path, hash] of Object.entries(target)) {
      if (current.get(path)?.hash === hash) continue;
      const full = join(dir, ...path.split("/"));
      mkdirSync(dirname(full), { recursive: true });
      const temp = join(dirname(full), stagedName(basename(full), process.pid));
      writeFileSync(temp, content(hash));
      staged.push({ path, full, temp });
    }
  } catch (error) {
    for (const s of staged) rmSync(s.temp, { force: true });
    throw error;
  }
  const deleted: string[] = [];
  let renamed = 0;
  try {
    for (const path of current.keys()) {
      if (path in target) continue;
      rmSync(join(dir, ...path.split("/")), { force: true });
      deleted.push(path);
    }
    for (; renamed < staged.length; renamed++) renameSync(staged[renamed]!.temp, staged[renamed]!.full);
  } catch (error) {
    for (const s of staged.slice(renamed)) rmSync(s.temp, { force: true });
    throw error;
  }
  return { written: staged.map((s) => s.path), deleted };
}

/** A unified diff of the files that differ between two manifests (binary files are named, not shown). */
export function filesPatch(a: Record<string, string>, b: Record<string, string>, content: (hash: string) => Buffer): string {
  let patch = "";
  for (const path of changedPaths(a, b)) {
    const before = a[path] === undefined ? Buffer.alloc(0) : content(a[path]!);
    const after = b[path] === undefined ? Buffer.alloc(0) : content(b[path]!);
    const from = a[path] === undefined ? "/dev/null" : `a/${path}`;
    const to = b[path] === undefined ? "/dev/null" : `b/${path}`;
    if (before.includes(0) || after.includes(0)) patch += `Binary files ${from} and ${to} differ\n`;
    else patch += textPatch(from, to, before.toString("utf8"), after.toString("utf8"));
  }
  return patch;
}
