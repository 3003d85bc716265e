// The names a restore stages files under, beside their destinations, and links the files it replaces aside under;
// and the removal of those a restore that died left behind.
import { readdirSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join, relative, sep } from "node:path";
import { sha256 } from "../integrity/hashes.js";

/** Restores stage each file beside its destination (`<file>.forkpoint-<pid>.tmp`), then rename it into place. */
const STAGED_SUFFIX = ".forkpoint-";
/** The longest file name most file systems take, in bytes. */
const MAX_NAME_BYTES = 255;

/** The name a file a restore by `pid` replaces is linked aside under until it is unlinked: `<name>.forkpoint-<pid>.old`. */
export function asideName(name: string, pid: number): string {
  const long = `${name}${STAGED_SUFFIX}${pid}.old`;
  return Buffer.byteLength(long) <= MAX_NAME_BYTES ? long : `${STAGED_SUFFIX}${pid}-${sha256(name).slice(0, 16)}.old`;
}

/**
 * The name a restore by `pid` stages `name` under: `<name>.forkpoint-<pid>.tmp`, or, when that would be too long a
 * file name, `.forkpoint-<pid>-<16 hex of the name's SHA-256>.tmp`.
 */
export function stagedName(name: string, pid: number): string {
  const long = `${name}${STAGED_SUFFIX}${pid}.tmp`;
  return Buffer.byteLength(long) <= MAX_NAME_BYTES ? long : `${STAGED_SUFFIX}${pid}-${sha256(name).slice(0, 16)}.tmp`;
}

/** The paths restores run by `pids` stage `paths` under (relative to the workspace). */
export function stagedPaths(paths: readonly string[], pids: readonly number[]): string[] {
  return paths.flatMap((path) => {
    const at = path.lastIndexOf("/");
    return pids.map((pid) => `${path.slice(0, at + 1)}${stagedName(path.slice(at + 1), pid)}`);
  });
}

/**
 * Removes the files that restores run by `pids` staged beside `paths` and never renamed into place, or linked aside
 * and never unlinked (their process died): forkpoint's own leftovers; a file linked or moved aside whose place is empty
 * goes back to it. A name that is itself one of `tracked` is the user's file, and is kept.
 * Returns what it removed (paths relative to `dir`).
 */
export function removeStaged(dir: string, paths: readonly string[], pids: readonly number[], tracked: (path: string) => boolean): string[] {
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
    for (const n of names)
      for (const pid of pids)
        for (const name of [stagedName(n, pid), asideName(n, pid)]) {
          if (!found.has(name)) continue;
          const path = relative(dir, join(folder, name)).split(sep).join("/");
          if (tracked(path)) continue;
          // A file moved aside whose place is still empty (its process died before the restore's file landed there,
          // or before a delete was done) goes back to it: the restore is then finished from there.
          if (name === asideName(n, pid) && !found.has(n)) {
            renameSync(join(folder, name), join(folder, n));
            found.add(n);
          } else rmSync(join(folder, name), { force: true });
          removed.push(path);
        }
  }
  return removed;
}
