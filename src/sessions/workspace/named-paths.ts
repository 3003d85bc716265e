// The workspace paths a tool call's arguments name: where a call whose run changed no file (a delete of a missing file)
// may write when run again, since its record names no path (see `writtenPaths` in conversation-drift.ts).
import { realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { JsonValue } from "../../models/json.js";

/** Strings longer than this are contents, not paths. */
const MAX_PATH_CHARS = 4096;
/** Arguments are read this far: a call's paths sit near the top of its arguments. */
const MAX_STRINGS = 1000;

/**
 * The paths under `dir` (the workspace, its real path) that a string of `args` names, relative to it with `/`: an
 * absolute path, or a relative one read against the process's directory (where an in-process tool resolves it) and
 * against the workspace. A path may name a folder: it then reaches what is under it (see `reaches`).
 */
export function namedPaths(dir: string, args: JsonValue): string[] {
  const out = new Set<string>();
  for (const text of stringsOf(args)) {
    if (text.length === 0 || text.length > MAX_PATH_CHARS || /[\0\n]/.test(text)) continue;
    for (const full of isAbsolute(text) ? [text] : [resolve(text), resolve(dir, text)]) {
      const rel = within(dir, full);
      if (rel !== undefined) out.add(rel);
    }
  }
  return [...out].sort();
}

/** Whether `path` is in `reach` or under a folder it names. */
export function reaches(reach: ReadonlySet<string>, path: string): boolean {
  for (let at = path; ; at = at.slice(0, at.lastIndexOf("/"))) {
    if (reach.has(at)) return true;
    if (!at.includes("/")) return false;
  }
}

/** `full` relative to `dir` when inside it (not the folder itself), through links on the way (a temp folder's, say). */
function within(dir: string, full: string): string | undefined {
  for (const candidate of [full, real(full)]) {
    if (candidate === undefined) continue;
    const rel = relative(dir, candidate);
    if (rel !== "" && !isAbsolute(rel) && rel !== ".." && !rel.startsWith(`..${sep}`)) return rel.split(sep).join("/");
  }
  return undefined;
}

/** `full` with its folder's links resolved; undefined when that folder does not exist. */
function real(full: string): string | undefined {
  try {
    return join(realpathSync(dirname(full)), basename(full));
  } catch {
    return undefined;
  }
}

/** The string values of `value`, depth first, at most `MAX_STRINGS`. */
function stringsOf(value: JsonValue): string[] {
  const out: string[] = [];
  const stack: JsonValue[] = [value];
  while (stack.length > 0 && out.length < MAX_STRINGS) {
    const v = stack.pop()!;
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) stack.push(...v);
    else if (v !== null && typeof v === "object") stack.push(...Object.values(v));
  }
  return out;
}
