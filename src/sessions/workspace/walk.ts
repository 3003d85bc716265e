// A scan's file-system side: walking a directory (or looking again at the paths a watcher named) and bringing the stat
// cache up to date with it, reading a file only when its stat data changed (or its entry is racy). What cannot be
// stored (see `StatCache.skip`) is skipped, with why: one such file never stops a scan. What a restore itself wrote is
// recorded by cache-writes.ts.
import { isUtf8 } from "node:buffer";
import { closeSync, lstatSync, openSync, readFileSync, readSync, readdirSync, type BigIntStats } from "node:fs";
import { createHash } from "node:crypto";
import { ForkpointError, errorText } from "../../models/errors.js";
import { sha256 } from "../integrity/hashes.js";
import { DirNode, isDir, join, type FileEntry } from "./dir-node.js";
import type { Rules } from "./rules.js";
import type { StatCache } from "./stat-cache.js";
import { sqliteSideReason } from "./sqlite-files.js";

/**
 * A file modified within this long before it was read could be modified again with the same mtime (timestamps are
 * coarse: a kernel tick on Linux, 1–2 s on some file systems): such an entry is read again whenever it is checked.
 */
export const RACY_NS = 2_000_000_000n;
/** Files up to this size are read whole; larger ones are hashed in reads of this size. */
const READ_CHUNK = 1 << 20;

/** Where a scan reads from, what it leaves out, and where the contents it reads go. */
export interface ScanContext {
  /** The workspace's directory (absolute, real). */
  root: string;
  rules: Rules;
  /** Absolute paths never captured (the database's own files). */
  skip: ReadonlySet<string>;
  maxBytes: number;
  /** Called with each content read (a new or changed file), when the scan is to store them. */
  store?: (hash: string, content: Buffer) => void;
  /** Whether the walk should pause (yield) so that what it stored is written. */
  full?: () => boolean;
  /**
   * Collects the inodes of files found with more than one link that were not known so: the other names of such a file
   * in the cache are looked at too (`refreshLinked`). Left out of whole walks, which look at every name anyway.
   */
  newlyLinked?: Set<bigint>;
  /** Collects a path on each device (st_dev) the walk met: a file system mounted inside the workspace. */
  devices?: Map<bigint, string>;
}

/** Whether two stats describe the same file content as far as stat data can tell. */
export function sameStat(e: FileEntry, st: BigIntStats): boolean {
  return e.size === st.size && e.mtimeNs === st.mtimeNs && e.ctimeNs === st.ctimeNs && e.ino === st.ino && e.mode === Number(st.mode);
}

/** Why a name is skipped when it is not UTF-8: a snapshot stores paths as text. */
const BAD_NAME = "has a name that is not UTF-8, which cannot be stored as text (shown here with U+FFFD)";

/** Why a symbolic link is skipped. */
export const LINK_REASON = "is a symbolic link (links are not captured)";

/** What a directory entry (or a stat) is when it is neither a file nor a directory: why it is skipped. */
function kindReason(e: {
  isSymbolicLink(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isBlockDevice(): boolean;
  isCharacterDevice(): boolean;
}): string {
  if (e.isSymbolicLink()) return LINK_REASON;
  if (e.isFIFO()) return "is a FIFO (a named pipe)";
  if (e.isSocket()) return "is a socket";
  if (e.isBlockDevice() || e.isCharacterDevice()) return "is a device";
  return "is not a regular file";
}

export const codeOf = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** Why a file or directory is skipped that cannot be read or listed. */
const unreadable = (error: unknown) => `cannot be read (${codeOf(error) ?? (error as Error).message})`;

/** The workspace directory itself cannot be listed (gone, a file now, no permission): nothing can be captured or restored. */
function rootUnlistable(root: string, error: unknown): ForkpointError {
  const code = codeOf(error);
  const why = code === "ENOENT" ? "does not exist" : code === "ENOTDIR" ? "is not a directory" : `cannot be listed (${errorText(error)})`;
  return new ForkpointError(
    "WORKSPACE_MISSING",
    `the workspace directory ${root} ${why}: put it back before its files are checkpointed, compared or restored`,
    { cause: error },
  );
}

/** A directory the walk cannot list (`rel`): its parent skips it, unless it is the workspace itself. */
class Unlistable extends Error {
  constructor(
    readonly rel: string,
    override readonly cause: unknown,
  ) {
    super(`cannot list ${rel}`);
  }
}

/** Walks the subdirectory `name` of `node` (at `rel`); one that cannot be listed is skipped, one gone is removed. */
function* walkChild(cache: StatCache, sc: ScanContext, node: DirNode, name: string, rel: string, child: DirNode): Generator<void> {
  try {
    yield* walkTree(cache, sc, child, rel);
  } catch (error) {
    if (!(error instanceof Unlistable) || error.rel !== rel) throw error;
    const code = codeOf(error.cause);
    if (code === "ENOENT" || code === "ENOTDIR") cache.remove(node, name, rel);
    else cache.skip(node, name, rel, unreadable(error.cause));
  }
}

/** Reads and hashes a file of `size` bytes (stat'ed just before); the content too when it is small or to be stored. */
function readFile(full: string, size: number, keep: boolean): { hash: string; content: Buffer | null } {
  if (keep || size <= READ_CHUNK) {
    // Read to its end (it may have changed since the lstat: its next scan sees that, its stat data having changed).
    const content = readFileSync(full);
    return { hash: sha256(content), content };
  }
  // A large file that is not stored: hashed in chunks, never held whole.
  const fd = openSync(full, "r");
  try {
    const hash = createHash("sha256");
    const buf = Buffer.allocUnsafe(READ_CHUNK);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      hash.update(buf.subarray(0, n));
    }
    return { hash: hash.digest("hex"), content: null };
  } finally {
    closeSync(fd);
  }
}

/**
 * Brings the entry of the file `name` of `dir` (at `rel`, absolute `full`) up to date: lstat, and a read only when its
 * stat data changed (or its entry is racy). Anything but a regular file is not captured (removed from the cache).
 */
function refreshFile(cache: StatCache, sc: ScanContext, dir: DirNode, name: string, rel: string, full: string): void {
  const statAt = BigInt(Date.now()) * 1_000_000n;
  const st = lstatSync(full, { bigint: true, throwIfNoEntry: false });
  if (!st || st.isDirectory() || sc.skip.has(full) || !st.isFile()) cache.linked.delete(rel);
  if (!st || st.isDirectory() || sc.skip.has(full)) return cache.remove(dir, name, rel);
  if (!st.isFile()) return cache.skip(dir, name, rel, kindReason(st));
  const side = sqliteSideReason(full);
  if (side) return cache.skip(dir, name, rel, side);
  if (sc.devices && !sc.devices.has(st.dev)) sc.devices.set(st.dev, full);
  if (st.nlink <= 1n) cache.linked.delete(rel);
  else if (!cache.linked.has(rel)) (cache.linked.add(rel), sc.newlyLinked?.add(st.ino));
  const old = dir.entries.get(name);
  if (old !== undefined && !isDir(old) && !old.racy && sameStat(old, st)) return;
  if (st.size > BigInt(sc.maxBytes)) return cache.skip(dir, name, rel, `is ${st.size} bytes, over the limit of ${sc.maxBytes}`);
  let read: { hash: string; content: Buffer | null };
  try {
    cache.reads++;
    read = readFile(full, Number(st.size), sc.store !== undefined);
  } catch (error) {
    // Gone (or replaced by a directory) between the lstat and the read: what it is now is seen by the next scan.
    if (codeOf(error) === "ENOENT" || codeOf(error) === "EISDIR") return cache.remove(dir, name, rel);
    return cache.skip(dir, name, rel, unreadable(error));
  }
  const entry: FileEntry = {
    size: st.size,
    mtimeNs: st.mtimeNs,
    ctimeNs: st.ctimeNs,
    ino: st.ino,
    mode: Number(st.mode),
    hash: read.hash,
    racy: st.mtimeNs >= statAt - RACY_NS,
  };
  if (read.content && sc.store && (old === undefined || isDir(old) || old.hash !== read.hash)) sc.store(read.hash, read.content);
  // Its stat data changed: written again, maybe with the same content (a tool rewriting a file: that file is its).
  cache.setFile(dir, name, rel, entry, old !== undefined && !isDir(old) && !sameStat(old, st));
}

/** Walks the directory `node` (at `rel`) and everything below it, reconciling the cache with what is there now. */
export function* walkTree(cache: StatCache, sc: ScanContext, node: DirNode, rel: string): Generator<void> {
  const full = rel === "" ? sc.root : `${sc.root}/${rel}`;
  const present = new Set<string>();
  // Names read as text; a directory holding one that is not UTF-8 (shown with U+FFFD) is read again as bytes: such a
  // name may be excluded, else it is skipped.
  let dirents: import("node:fs").Dirent<string | Buffer>[];
  try {
    dirents = readdirSync(full, { withFileTypes: true });
    if (dirents.some((d) => (d.name as string).includes("\uFFFD")))
      dirents = readdirSync(full, { withFileTypes: true, encoding: "buffer" });
  } catch (error) {
    if (rel === "") throw rootUnlistable(sc.root, error);
    throw new Unlistable(rel, error);
  }
  for (const d of dirents) {
    const raw = typeof d.name === "string" ? null : d.name;
    const name = d.name.toString();
    const childRel = join(rel, name);
    const childFull = `${full}/${name}`;
    const isDirectory = d.isDirectory();
    if (isDirectory ? sc.rules.ignored(childRel, true) : sc.skip.has(childFull) || sc.rules.ignored(childRel, false)) continue;
    present.add(name);
    if (raw && !isUtf8(raw)) cache.skip(node, name, childRel, BAD_NAME);
    else if (isDirectory) {
      let child = node.entries.get(name);
      if (!isDir(child)) {
        if (child !== undefined) cache.remove(node, name, childRel);
        child = cache.dir(childRel);
      }
      yield* walkChild(cache, sc, node, name, childRel, child);
    } else if (d.isFile()) {
      refreshFile(cache, sc, node, name, childRel, childFull);
      if (sc.full?.()) yield;
    } else cache.skip(node, name, childRel, kindReason(d));
  }
  for (const name of [...node.entries.keys(), ...(node.skipped?.keys() ?? [])])
    if (!present.has(name)) cache.remove(node, name, join(rel, name));
}

/**
 * Brings the cache up to date for paths that may have changed (a watcher's events): each is looked at again, a
 * directory new to the cache (or in `trees`) is walked whole. A path under a directory the cache does not have is
 * taken care of by walking the topmost such directory.
 */
export function* refreshPaths(cache: StatCache, sc: ScanContext, paths: Iterable<string>, trees: ReadonlySet<string>): Generator<void> {
  for (const rel of paths) {
    const parts = rel.split("/");
    let node = cache.root;
    let at = "";
    let done = false;
    for (let i = 0; i < parts.length - 1 && !done; i++) {
      const child = node.entries.get(parts[i]!);
      const childRel = join(at, parts[i]!);
      if (isDir(child)) {
        node = child;
        at = childRel;
        continue;
      }
      // A directory on the way that the cache does not have: look at it (it is walked if it is to be captured).
      yield* refreshEntry(cache, sc, node, parts[i]!, childRel, true);
      done = true;
    }
    if (!done) yield* refreshEntry(cache, sc, node, parts[parts.length - 1]!, rel, trees.has(rel));
    if (sc.full?.()) yield;
  }
}

/** Looks at `name` of `dir` (at `rel`) again; a directory is walked when `whole` or when the cache lacks it. */
function* refreshEntry(cache: StatCache, sc: ScanContext, dir: DirNode, name: string, rel: string, whole: boolean): Generator<void> {
  const full = `${sc.root}/${rel}`;
  let st: import("node:fs").Stats | undefined;
  try {
    st = lstatSync(full, { throwIfNoEntry: false });
  } catch (error) {
    if (codeOf(error) !== "ENOTDIR") throw error; // below what is a file now: nothing there
  }
  if (!st) return cache.remove(dir, name, rel);
  if (st.isDirectory()) {
    if (sc.rules.ignored(rel, true)) return cache.remove(dir, name, rel);
    const old = dir.entries.get(name);
    if (isDir(old) && !whole) return;
    if (old !== undefined && !isDir(old)) cache.remove(dir, name, rel);
    yield* walkChild(cache, sc, dir, name, rel, cache.dir(rel));
    return;
  }
  if (sc.skip.has(full) || sc.rules.ignored(rel, false)) return cache.remove(dir, name, rel);
  if (!st.isFile()) return cache.skip(dir, name, rel, kindReason(st));
  refreshFile(cache, sc, dir, name, rel, full);
}

/** Reads a directory's entries again (its own names only; subdirectories already known are not walked). */
export function* relistDir(cache: StatCache, sc: ScanContext, rel: string): Generator<void> {
  const node = cache.find(rel);
  if (!isDir(node)) return yield* refreshPaths(cache, sc, [rel], new Set([rel]));
  let names: Buffer[];
  try {
    names = readdirSync(rel === "" ? sc.root : `${sc.root}/${rel}`, { encoding: "buffer" });
  } catch (error) {
    if (rel === "") throw rootUnlistable(sc.root, error);
    if (codeOf(error) === "ENOENT" || codeOf(error) === "ENOTDIR") return yield* refreshPaths(cache, sc, [rel], new Set());
    // No longer readable: skipped by its parent.
    const at = rel.lastIndexOf("/");
    const parent = cache.find(at < 0 ? "" : rel.slice(0, at));
    if (isDir(parent)) cache.skip(parent, rel.slice(at + 1), rel, unreadable(error));
    return;
  }
  const present = new Set(names.map((n) => n.toString()));
  for (const name of [...node.entries.keys(), ...(node.skipped?.keys() ?? [])])
    if (!present.has(name)) cache.remove(node, name, join(rel, name));
  for (const raw of names) {
    const name = raw.toString();
    if (!isUtf8(raw)) {
      const childRel = join(rel, name);
      const isDirectory = lstatSync(`${sc.root}/${childRel}`, { throwIfNoEntry: false })?.isDirectory() ?? false;
      if (!sc.rules.ignored(childRel, isDirectory)) cache.skip(node, name, childRel, BAD_NAME);
      continue;
    }
    yield* refreshEntry(cache, sc, node, name, join(rel, name), false);
  }
}

/**
 * Looks again at the files known to have several links (`StatCache.linked`), whatever the watcher said: a write through
 * another name of one changes it with no event for its own name. A file newly found so (`sc.newlyLinked`) adds the
 * other names the cache has for its inode (a hard link made in another folder of the workspace).
 */
export function* refreshLinked(cache: StatCache, sc: ScanContext & { newlyLinked: Set<bigint> }): Generator<void> {
  // Bounded: each round adds only names not yet in the set.
  for (let before = -1; before !== cache.linked.size;) {
    before = cache.linked.size;
    if (sc.newlyLinked.size > 0) {
      for (const [rel, e] of cache.files()) if (sc.newlyLinked.has(e.ino)) cache.linked.add(rel);
      sc.newlyLinked.clear();
    }
    yield* refreshPaths(cache, sc, [...cache.linked], new Set());
  }
  // Names gone with their folder (never looked at by name) leave the set.
  for (const rel of cache.linked) if (cache.fileId(rel) === null) cache.linked.delete(rel);
}
