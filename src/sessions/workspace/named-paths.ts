// The workspace paths a tool call's arguments name: where a call whose run changed no file (a delete of a missing file)
// may write when undone or run again, since its record names no path (see `writtenPaths` in conversation-drift.ts).
import { lstatSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { JsonValue } from "../../models/json.js";

/** Strings longer than this are contents, not paths. */
const MAX_PATH_CHARS = 4096;
/** Arguments are read this far: a call's paths sit near the top of its arguments. */
const MAX_STRINGS = 1000;
/** Values queued at most: a huge array's tail is contents too, never read. */
const MAX_VALUES = 10 * MAX_STRINGS;

/**
 * The paths under `dir` (the workspace, its real path) that a string of `args` names, relative to it with `/`: an
 * absolute path, or a relative one read against the process's directory (where an in-process tool resolves it) and
 * against the workspace. A path may name a folder: it then reaches what is under it (see `reaches`).
 */
export function namedPaths(dir: string, args: JsonValue): string[] {
  const out = new Set<string>();
  // Most strings of one call sit in the same folder (lines of a file, say): each folder's real path is read once.
  const folders = new Map<string, string | undefined>();
  for (const text of stringsOf(args)) {
    if (text.length === 0 || text.length > MAX_PATH_CHARS || /[\0\n]/.test(text)) continue;
    for (const full of isAbsolute(text) ? [text] : [resolve(text), resolve(dir, text)]) {
      for (const rel of within(dir, full, folders)) out.add(rel);
    }
  }
  return [...out].sort();
}

/** Whether `path` is in `reach` or under a folder it names. */
export function reaches(reach: ReadonlySet<string>, path: string): boolean {
  // "": the workspace itself, reaching every file in it.
  if (reach.has("")) return true;
  for (let at = path; ; at = at.slice(0, at.lastIndexOf("/"))) {
    if (reach.has(at)) return true;
    if (!at.includes("/")) return false;
  }
}

/**
 * `full` relative to `dir` when inside it (the folder itself: ""), as written and through the links on the way (a temp
 * folder's, or a linked file or folder inside the workspace, the last part of the path included: drift is reported at
 * the real path).
 */
function within(dir: string, full: string, folders: Map<string, string | undefined>): string[] {
  const out: string[] = [];
  for (const candidate of [full, real(full, folders), linkTarget(full)]) {
    if (candidate === undefined) continue;
    const rel = relative(dir, candidate);
    if (!isAbsolute(rel) && rel !== ".." && !rel.startsWith(`..${sep}`)) out.push(rel.split(sep).join("/"));
  }
  return out;
}

/** `full` with its folder's links resolved; undefined when that folder does not exist. */
function real(full: string, folders: Map<string, string | undefined>): string | undefined {
  const folder = dirname(full);
  if (!folders.has(folder)) {
    let resolved: string | undefined;
    try {
      resolved = realpathSync(folder);
    } catch {
      resolved = undefined;
    }
    folders.set(folder, resolved);
  }
  const resolved = folders.get(folder);
  return resolved === undefined ? undefined : join(resolved, basename(full));
}

/**
 * Where `full` leads when it is a link (a call naming it writes through it: the file it leads to, or what is in the
 * folder); else undefined.
 */
function linkTarget(full: string): string | undefined {
  try {
    if (!lstatSync(full).isSymbolicLink()) return undefined;
    return realpathSync(full);
  } catch {
    return undefined;
  }
}

/** The string values of `value`, breadth first (a call's paths sit near the top of its arguments), at most `MAX_STRINGS`. */
function stringsOf(value: JsonValue): string[] {
  const out: string[] = [];
  const queue: JsonValue[] = [value];
  for (let at = 0; at < queue.length && out.length < MAX_STRINGS; at++) {
    const v = queue[at]!;
    if (typeof v === "string") out.push(v);
    else if (v !== null && typeof v === "object") {
      for (const item of Array.isArray(v) ? v : Object.values(v)) if (queue.length < MAX_VALUES) queue.push(item);
    }
  }
  return out;
}
