// The file-system side of restores: what may be written, and applying a snapshot's changes to the directory (each file
// staged beside its place, then renamed into it), whatever each path is now: a file, a directory, or nothing.
import {
  chmodSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  rmdirSync,
  unlinkSync,
  writeFileSync,
  type BigIntStats,
} from "node:fs";
import { rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { contentOf, keptModeOf, modeOf } from "./file-id.js";
import { asideName, stagedName } from "./staged.js";
import { sqliteInUse } from "./sqlite-files.js";

/** A change a restore applies: the file at `path`, file `from` now (null: none), gets id `to` (null: it is deleted). */
export interface RestoreChange {
  path: string;
  from: string | null;
  to: string | null;
}

/** Whether the file at `path` still is `from` (see `stillIs`): asked right before the restore replaces or deletes it. */
export type StillThere = (path: string, from: string | null) => boolean;

/**
 * How far a restore got: `any` turns true once the directory starts to change; `applied`, when given, collects each
 * change once it is done (so that a restore that fails midway can be taken back).
 */
export interface Moved {
  any: boolean;
  applied?: RestoreChange[];
}

/** What a restore did: files written and deleted, and those it left as someone changed them meanwhile. */
export interface Restored {
  written: string[];
  deleted: string[];
  kept: string[];
}

type Kind = "dir" | "file" | "link" | "none";

/** Up to five paths, then how many more. */
const listed = (paths: readonly string[]) => paths.slice(0, 5).join(", ") + (paths.length > 5 ? `, and ${paths.length - 5} more` : "");

/**
 * Why `changes` cannot be applied under `dir`, or null. A symbolic link anywhere on the way refuses them (writing
 * through it could change a file outside the workspace); so does a file where a directory must be, or a directory
 * where a file must be, unless the restore itself deletes that file, or everything that directory holds.
 */
export function assertRestorable(dir: string, changes: readonly RestoreChange[]): string | null {
  // The directory itself swapped for a link (to a copy elsewhere, say): nothing is written through it.
  if (lstatSync(dir, { throwIfNoEntry: false })?.isSymbolicLink())
    return `${dir} itself is a symbolic link now: writing through it would change files outside the workspace`;
  const deleted = new Set(changes.filter((c) => c.to === null).map((c) => c.path));
  const seen = new Map<string, Kind>();
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
  for (const { path, to } of changes) {
    const parts = path.split("/");
    if (parts.some((p) => p === "" || p === "." || p === "..")) return `${path} is not a plain relative path`;
    let at = dir;
    for (let i = 0; i < parts.length; i++) {
      at = join(at, parts[i]!);
      const rel = parts.slice(0, i + 1).join("/");
      const k = kind(at);
      if (k === "none") break;
      if (k === "link") return `${rel} is a symbolic link`;
      if (i < parts.length - 1 && k === "file") {
        // Deleted by this restore before anything is written below it; nothing to delete below a file.
        if (deleted.has(rel) || to === null) break;
        return `${rel} is a file where ${path} needs a directory`;
      }
      if (i === parts.length - 1 && k === "file") {
        const inUse = sqliteInUse(at, rel);
        if (inUse) return inUse;
      }
      if (i === parts.length - 1 && k === "dir") {
        if (to === null) return `${path} is a directory`;
        const kept = notDeleted(at, rel, deleted);
        if (kept.length > 0) return `${path} is a directory holding ${listed(kept)}, which the restore does not delete`;
      }
    }
  }
  return null;
}

/** What the directory `full` (at `rel`) holds that the restore does not delete: files of no change, links, others. */
function notDeleted(full: string, rel: string, deleted: ReadonlySet<string>): string[] {
  const out: string[] = [];
  let entries;
  try {
    entries = readdirSync(full, { withFileTypes: true });
  } catch {
    return [`${rel}/ (which cannot be listed)`]; // what it holds is unknown: never deleted
  }
  for (const d of entries) {
    const path = `${rel}/${d.name}`;
    if (d.isDirectory()) out.push(...notDeleted(join(full, d.name), path, deleted));
    else if (!d.isFile() || !deleted.has(path)) out.push(path);
  }
  return out;
}

/** Removes the directory `full` and the directories below it, all empty of anything else (else it throws). */
function removeEmptyTree(full: string): void {
  for (const d of readdirSync(full, { withFileTypes: true })) {
    if (!d.isDirectory()) throw Object.assign(new Error(`${join(full, d.name)} is in the way of a file to restore`), { code: "ENOTEMPTY" });
    removeEmptyTree(join(full, d.name));
  }
  rmdirSync(full);
}

/** Whether nothing is at `full` (nor can be: a file is on its way). */
function absent(full: string): boolean {
  try {
    return lstatSync(full, { throwIfNoEntry: false }) === undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOTDIR") return true;
    throw error;
  }
}

/** Makes the folder `folder` (and those above it): false when a file is in the way (the restore deletes it first). */
function madeFolder(folder: string): boolean {
  try {
    mkdirSync(folder, { recursive: true });
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOTDIR" || code === "EEXIST") return false;
    throw error;
  }
}

/** The lstat of `full` (to the nanosecond), or null when nothing is there. */
function statOf(full: string): BigIntStats | null {
  try {
    return lstatSync(full, { bigint: true, throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}

/**
 * Whether the file a restore took away from its place (now at `aside`) was written since `before` (its lstat right
 * before the restore checked it): a write that landed between that check and the file's replacing or deleting went
 * into it. Its ctime is no witness (linking the file aside changes it); its inode, size and mtime are.
 */
function writtenSince(before: BigIntStats | null, aside: string): boolean {
  const now = statOf(aside);
  if (now === null) return false;
  if (before === null || !before.isFile()) return true;
  return now.ino !== before.ino || now.size !== before.size || now.mtimeNs !== before.mtimeNs;
}

/**
 * Puts the file `from` at `full` unless something is there (a file someone saved meanwhile, a folder), which is never
 * replaced: linked, then unlinked from `from`. On a file system without hard links, renamed once nothing is there.
 */
function landed(from: string, full: string): boolean {
  try {
    linkSync(from, full);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    if (code === "ENOENT" || code === "ENOTDIR") throw error;
    if (!absent(full)) return false;
    renameSync(from, full);
    return true;
  }
  unlinkSync(from);
  return true;
}

/** Writes a staged file, new, with `mode` (before the umask); a leftover of that name (its mode unknown) is replaced. */
export function writeStaged(temp: string, content: Buffer, mode: number): void {
  try {
    writeFileSync(temp, content, { mode, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    rmSync(temp, { force: true });
    writeFileSync(temp, content, { mode, flag: "wx" });
  }
}

/** Files staged (and their contents fetched) at a time: memory holds one batch's contents. */
const STAGE_BATCH = 256;

interface Staged {
  path: string;
  from: string | null;
  to: string | null;
  full: string;
  temp: string;
}

const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Applies `changes` to `dir` (which holds their `from` side): every new content is first written beside its place
 * under a temporary name; if one fails (disk full, permissions, a damaged content), the temporary files are removed
 * and the directory is as it was. Then deletes (first, so a name that differs only in case on a case-insensitive file
 * system is not deleted after being written), then renames into place. A file whose folder is a file now (a path that
 * turns from a file into a directory) is staged once that file is deleted; a directory where a file goes is removed
 * once the deletes emptied it. `moved.any` turns true once the directory starts to change. Check `assertRestorable`
 * first.
 * A file someone changed since the restore checked the directory (`still` says so, right before the file would be
 * replaced or deleted) is left as it is, with its newer content, and reported in `kept`; so is a path that something
 * new is in the way of.
 */
export async function restoreChanges(
  dir: string,
  changes: readonly RestoreChange[],
  contents: (hashes: string[]) => Promise<ReadonlyMap<string, Buffer>>,
  moved: Moved,
  still: StillThere = () => true,
): Promise<Restored> {
  const writes = changes.filter((c) => c.to !== null);
  const staged: Staged[] = [];
  const later: RestoreChange[] = [];
  const kept: string[] = [];
  const written: string[] = [];
  const stage = (c: RestoreChange, got: ReadonlyMap<string, Buffer>): Staged => {
    const full = join(dir, ...c.path.split("/"));
    const temp = join(dirname(full), stagedName(basename(full), process.pid));
    // A file replaced keeps its own permission bits (the snapshot holds only the executable bit), set exactly, whatever
    // the umask; a new one gets the default mode, as git checks files out.
    const there = lstatSync(full, { throwIfNoEntry: false });
    const content = got.get(contentOf(c.to!))!;
    if (there?.isFile()) {
      const mode = keptModeOf(c.to!, there.mode);
      writeStaged(temp, content, mode);
      chmodSync(temp, mode);
    } else writeStaged(temp, content, modeOf(c.to!));
    return { path: c.path, from: c.from, to: c.to, full, temp };
  };
  try {
    for (let i = 0; i < writes.length; i += STAGE_BATCH) {
      const batch = writes.slice(i, i + STAGE_BATCH);
      const got = await contents(batch.map((c) => contentOf(c.to!)));
      for (const c of batch) {
        if (madeFolder(dirname(join(dir, ...c.path.split("/"))))) staged.push(stage(c, got));
        else later.push(c);
      }
    }
  } catch (error) {
    for (const s of staged) rmSync(s.temp, { force: true });
    throw error;
  }
  const deleted: string[] = [];
  const aside: string[] = [];
  let renamed = 0;
  const put = ({ path, from, to, full, temp }: Staged) => {
    const before = statOf(full);
    if (!still(path, from)) return keep(path, temp);
    moved.any = true;
    if (lstatSync(full, { throwIfNoEntry: false })?.isDirectory()) {
      try {
        removeEmptyTree(full);
      } catch (error) {
        // Something new in the directory a file was to replace (or a file someone changed left there).
        if ((error as NodeJS.ErrnoException).code !== "ENOTEMPTY") throw error;
        return keep(path, temp);
      }
    }
    // What is at the path is first moved aside (whatever it is by then: an editor's save by rename included), and
    // unlinked below, off this thread: a rename that drops the last link of a file whose data is still being written
    // back waits for that write (ext4 starts it at each such rename), so replacing files a restore wrote a moment ago
    // (undo, then redo) took tens of ms per file. The restore's file then lands only where nothing is.
    const old = join(dirname(full), asideName(basename(full), process.pid));
    let took = false;
    try {
      renameSync(full, old);
      took = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    // Written after the check (the write went into the file taken aside): that file goes back to its place, kept.
    if (took && writtenSince(before, old)) {
      // A newer file at the path meanwhile (saved again) stays.
      if (!landed(old, full)) unlinkSync(old);
      return keep(path, temp);
    }
    let down: boolean;
    try {
      down = landed(temp, full);
    } catch (error) {
      if (took) landed(old, full);
      throw error;
    }
    if (took) aside.push(old);
    // Something new at the path since the file was taken aside (a save by rename, a new file): it stays.
    if (!down) return keep(path, temp);
    written.push(path);
    moved.applied?.push({ path, from, to: to! });
  };
  const keep = (path: string, temp: string) => {
    rmSync(temp, { force: true });
    kept.push(path);
  };
  let late: Staged | null = null;
  try {
    for (const c of changes) {
      if (c.to !== null) continue;
      const full = join(dir, ...c.path.split("/"));
      const before = statOf(full);
      if (!still(c.path, c.from)) {
        // Changed since: kept. Already gone: nothing to delete.
        if (absent(full)) deleted.push(c.path);
        else kept.push(c.path);
        continue;
      }
      moved.any = true;
      // Moved aside first, then unlinked: a write that landed after the check is found in it, and put back (linked, so
      // that a file created at the path meanwhile is not replaced).
      const gone = join(dirname(full), asideName(basename(full), process.pid));
      let took = false;
      try {
        renameSync(full, gone);
        took = true;
      } catch (error) {
        // Already gone, or below a file: there is nothing to delete there.
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
      }
      // A new file at the path meanwhile stays, and the one taken away is deleted as the restore meant to.
      if (took && writtenSince(before, gone) && landed(gone, full)) {
        kept.push(c.path);
        continue;
      }
      // unlink, not rm: Node 22's rm retries a refused unlink (EPERM) as an rmdir and reports ENOTDIR instead.
      if (took) unlinkSync(gone);
      deleted.push(c.path);
      moved.applied?.push(c);
    }
    for (; renamed < staged.length; renamed++) put(staged[renamed]!);
    for (const c of later) {
      // Still a file on the way (one someone changed was kept): the file below it is kept out too.
      if (!madeFolder(dirname(join(dir, ...c.path.split("/"))))) {
        kept.push(c.path);
        continue;
      }
      late = stage(c, await contents([contentOf(c.to!)]));
      put(late);
      staged.push(late);
      renamed++;
      late = null;
    }
  } catch (error) {
    for (const s of [...staged.slice(renamed), ...(late ? [late] : [])]) rmSync(s.temp, { force: true });
    await Promise.all(aside.map((old) => rm(old, { force: true })));
    throw error;
  }
  await Promise.all(aside.map((old) => rm(old, { force: true })));
  removeEmptied(dir, deleted);
  return { written: written.sort(byPath), deleted, kept: kept.sort(byPath) };
}

/**
 * Removes the folders (below `dir`) that the deletes of `deleted` left empty, deepest first: a snapshot holds no empty
 * folder. `rmdir` removes only an empty one, so a folder holding anything (a file the target has, an ignored or
 * uncaptured file, a folder someone made) stays, and so does one that was empty before (no delete emptied it).
 */
function removeEmptied(dir: string, deleted: readonly string[]): void {
  const folders = new Set<string>();
  for (const path of deleted)
    for (let at = path.lastIndexOf("/"); at > 0; at = path.lastIndexOf("/", at - 1)) folders.add(path.slice(0, at));
  const deepestFirst = [...folders].sort((a, b) => b.split("/").length - a.split("/").length);
  for (const folder of deepestFirst) {
    try {
      rmdirSync(join(dir, ...folder.split("/")));
    } catch {
      // Not empty, gone already, or not a folder (a link, a file made meanwhile): left as it is.
    }
  }
}
