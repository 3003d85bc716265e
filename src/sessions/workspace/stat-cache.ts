// A workspace's stat cache (git's index): what forkpoint last read of each file (size, mtime and ctime in ns, inode,
// mode, content hash), kept as a tree of directories whose tree hashes are cached (git's cache-tree), so that a scan
// reads only the files whose stat data changed and a snapshot re-hashes only the directories above them.
// Over 450 lines: the cache, its walk and its tree hashing share one in-memory structure; splitting them is next.
import { isUtf8 } from "node:buffer";
import { closeSync, lstatSync, openSync, readFileSync, readSync, readdirSync, type BigIntStats } from "node:fs";
import { createHash } from "node:crypto";
import { PayloadTooLargeError, ValidationError } from "../../models/errors.js";
import type { StatRow } from "../../store/port/index.js";
import { sha256 } from "../integrity/hashes.js";
import type { Rules } from "./rules.js";

/** One file as last read. `racy`: its mtime was too close to when it was read to trust (git's "racily clean"). */
export interface FileEntry {
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  ino: bigint;
  mode: number;
  hash: string;
  racy: boolean;
}

/**
 * A file modified within this long before it was read could be modified again with the same mtime (timestamps are
 * coarse: a kernel tick on Linux, 1–2 s on some file systems): such an entry is read again whenever it is checked.
 */
const RACY_NS = 2_000_000_000n;
/** Files up to this size are read whole; larger ones are hashed in reads of this size. */
const READ_CHUNK = 1 << 20;

/** A directory of the cache. `hash`: its tree's hash (undefined: to compute; null: no captured file below it). */
export class DirNode {
  readonly entries = new Map<string, FileEntry | DirNode>();
  hash: string | null | undefined = undefined;
  /** Its own files changed since the cache was last stored. */
  statDirty = false;
  /** Counts its own files' changes: rows stored for an older version leave it dirty. */
  version = 0;
  constructor(
    readonly parent: DirNode | null,
    readonly name: string,
  ) {}

  get path(): string {
    return this.parent === null ? "" : this.parent.parent === null ? this.name : `${this.parent.path}/${this.name}`;
  }

  /** Its tree hash goes stale, and so do its ancestors'. */
  invalidate(): void {
    for (let d: DirNode | null = this; d && d.hash !== undefined; d = d.parent) d.hash = undefined;
  }
}

const isDir = (e: FileEntry | DirNode | undefined): e is DirNode => e instanceof DirNode;
const join = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`);
const byKey = (a: readonly [string, string], b: readonly [string, string]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

/** A directory's tree body: `[[name, hash], ...]` by name, a subdirectory's name ending with "/" (empty ones left out). */
export function treeBody(node: DirNode): string {
  const rows: [string, string][] = [];
  for (const [name, e] of node.entries) {
    if (isDir(e)) {
      const h = treeHash(e);
      if (h !== null) rows.push([`${name}/`, h]);
    } else rows.push([name, e.hash]);
  }
  return JSON.stringify(rows.sort(byKey));
}

/** The tree hash of `node` (null when no captured file is below it), computing the stale ones. */
export function treeHash(node: DirNode): string | null {
  if (node.hash !== undefined) return node.hash;
  let any = false;
  for (const e of node.entries.values()) if (!isDir(e) || treeHash(e) !== null) any = true;
  node.hash = any ? sha256(treeBody(node)) : null;
  return node.hash;
}

/** The empty tree: a workspace with no captured file. */
export const EMPTY_TREE_BODY = "[]";
export const EMPTY_TREE = sha256(EMPTY_TREE_BODY);

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
  /** Collects a path on each device (st_dev) the walk met: a file system mounted inside the workspace. */
  devices?: Map<bigint, string>;
}

/** Stat cache rows to store, and the directories they were read from (at which version). */
export interface StatRows {
  rows: StatRow[];
  deleted: string[];
  nodes: [DirNode, number][];
}

/** The files of a workspace as last read; changes are recorded for the trackers registered (tool calls, moves). */
export class StatCache {
  readonly root = new DirNode(null, "");
  /** Directories whose stored rows are to be deleted. */
  readonly removedDirs = new Set<string>();
  /** Directories whose rows are to be stored (see `DirNode.statDirty`). */
  readonly dirtyDirs = new Set<DirNode>();
  /** Each tracker maps a path changed since it was registered to its hash before (null: it did not exist). */
  readonly trackers = new Set<Map<string, string | null>>();
  /** Files read (their stat data changed, or their entry was racy): what the cache saves is what this does not count. */
  reads = 0;

  /** The cache as stored (see `toRows`). */
  static fromRows(rows: readonly StatRow[]): StatCache {
    const cache = new StatCache();
    cache.#dirty(cache.root);
    for (const row of [...rows].sort((a, b) => a.dir.length - b.dir.length)) {
      const node = cache.#dirOf(row.dir, true)!;
      for (const [name, entry] of decodeStatBody(row.body)) node.entries.set(name, entry);
      cache.#clean(node);
    }
    return cache;
  }

  /** The rows of the directories changed since `markStored`, and the directories removed. */
  toRows(): StatRows {
    const rows: StatRow[] = [];
    const nodes: [DirNode, number][] = [];
    for (const node of this.dirtyDirs) {
      if (!this.#attached(node)) {
        this.dirtyDirs.delete(node);
        continue;
      }
      rows.push({ dir: node.path, body: encodeStatBody(node) });
      nodes.push([node, node.version]);
    }
    const written = new Set(rows.map((r) => r.dir));
    return { rows, deleted: [...this.removedDirs].filter((d) => !written.has(d)), nodes };
  }

  /** What `toRows` returned is stored (a directory changed since stays to be stored). */
  markStored(stored: StatRows): void {
    for (const [node, version] of stored.nodes) if (node.version === version) this.#clean(node);
    for (const d of stored.deleted) this.removedDirs.delete(d);
    for (const r of stored.rows) this.removedDirs.delete(r.dir);
  }

  /** Every directory's rows are to be stored again (the stored cache was cleared). */
  markAllUnstored(): void {
    const visit = (node: DirNode) => {
      this.#dirty(node);
      for (const e of node.entries.values()) if (isDir(e)) visit(e);
    };
    visit(this.root);
  }

  #dirty(node: DirNode): void {
    node.statDirty = true;
    node.version++;
    this.dirtyDirs.add(node);
  }

  #clean(node: DirNode): void {
    node.statDirty = false;
    this.dirtyDirs.delete(node);
  }

  /** Whether `node` is still in the tree (not under a directory removed since). */
  #attached(node: DirNode): boolean {
    for (let d = node; d.parent !== null; d = d.parent) if (d.parent.entries.get(d.name) !== d) return false;
    return true;
  }

  /** The entry at `rel` ("" is the root). */
  find(rel: string): FileEntry | DirNode | undefined {
    if (rel === "") return this.root;
    let node: DirNode = this.root;
    const parts = rel.split("/");
    for (let i = 0; i < parts.length - 1; i++) {
      const next = node.entries.get(parts[i]!);
      if (!isDir(next)) return undefined;
      node = next;
    }
    return node.entries.get(parts[parts.length - 1]!);
  }

  /** The hash of the file at `rel`, or null. */
  fileHash(rel: string): string | null {
    const e = this.find(rel);
    return e === undefined || isDir(e) ? null : e.hash;
  }

  #dirOf(rel: string, create: boolean): DirNode | undefined {
    let node = this.root;
    if (rel === "") return node;
    for (const part of rel.split("/")) {
      let next = node.entries.get(part);
      if (!isDir(next)) {
        if (!create) return undefined;
        if (next !== undefined) this.#record(join(node.path, part), next.hash, null);
        next = new DirNode(node, part);
        node.entries.set(part, next);
        this.#dirty(next);
        this.#dirty(node);
        node.invalidate();
      }
      node = next;
    }
    return node;
  }

  #record(rel: string, before: string | null, after: string | null): void {
    if (before === after) return;
    for (const t of this.trackers) if (!t.has(rel)) t.set(rel, before);
  }

  /** Records every file under `node` (at `rel`) as gone, and its directories as removed. */
  #dropTree(node: DirNode, rel: string): void {
    this.removedDirs.add(rel);
    for (const [name, e] of node.entries) {
      if (isDir(e)) this.#dropTree(e, join(rel, name));
      else this.#record(join(rel, name), e.hash, null);
    }
  }

  /** Sets the file `name` of `dir` (at `rel`). */
  setFile(dir: DirNode, name: string, rel: string, entry: FileEntry): void {
    const old = dir.entries.get(name);
    if (isDir(old)) this.#dropTree(old, rel);
    const before = old === undefined || isDir(old) ? null : old.hash;
    this.#record(rel, before, entry.hash);
    dir.entries.set(name, entry);
    this.#dirty(dir);
    if (before !== entry.hash) dir.invalidate();
  }

  /** Removes `name` of `dir` (a file, or a directory and all below it). */
  remove(dir: DirNode, name: string, rel: string): void {
    const old = dir.entries.get(name);
    if (old === undefined) return;
    if (isDir(old)) this.#dropTree(old, rel);
    else this.#record(rel, old.hash, null);
    dir.entries.delete(name);
    this.#dirty(dir);
    dir.invalidate();
  }

  /** The directory node at `rel`, made (with its ancestors) if missing. */
  dir(rel: string): DirNode {
    return this.#dirOf(rel, true)!;
  }

  /** Visits every file (relative path, entry). */
  *files(node: DirNode = this.root, rel = ""): Generator<[string, FileEntry]> {
    for (const [name, e] of node.entries) {
      if (isDir(e)) yield* this.files(e, join(rel, name));
      else yield [join(rel, name), e];
    }
  }

  /** The number of files. */
  count(node: DirNode = this.root): number {
    let n = 0;
    for (const e of node.entries.values()) n += isDir(e) ? this.count(e) : 1;
    return n;
  }
}

/** Whether two stats describe the same file content as far as stat data can tell. */
function sameStat(e: FileEntry, st: BigIntStats): boolean {
  return e.size === st.size && e.mtimeNs === st.mtimeNs && e.ctimeNs === st.ctimeNs && e.ino === st.ino && e.mode === Number(st.mode);
}

/** `name` as text, or a MALFORMED_TEXT error naming it: a snapshot stores paths as text. */
function textName(name: Buffer, dirRel: string): string {
  const text = name.toString();
  if (isUtf8(name)) return text;
  throw new ValidationError(
    `workspace file ${join(dirRel, text)}`,
    "has a name that is not UTF-8, which cannot be stored as text: rename or exclude it",
    "MALFORMED_TEXT",
  );
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
  if (!st || !st.isFile() || sc.skip.has(full)) return cache.remove(dir, name, rel);
  if (sc.devices && !sc.devices.has(st.dev)) sc.devices.set(st.dev, full);
  const old = dir.entries.get(name);
  if (old !== undefined && !isDir(old) && !old.racy && sameStat(old, st)) return;
  if (st.size > BigInt(sc.maxBytes)) {
    throw new PayloadTooLargeError(
      `workspace file ${rel}`,
      `is ${st.size} bytes, over the limit of ${sc.maxBytes}; exclude it`,
      sc.maxBytes,
    );
  }
  let read: { hash: string; content: Buffer | null };
  try {
    cache.reads++;
    read = readFile(full, Number(st.size), sc.store !== undefined);
  } catch (error) {
    // Gone (or replaced by a directory) between the lstat and the read: what it is now is seen by the next scan.
    if ((error as NodeJS.ErrnoException).code === "ENOENT" || (error as NodeJS.ErrnoException).code === "EISDIR")
      return cache.remove(dir, name, rel);
    throw error;
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
  cache.setFile(dir, name, rel, entry);
}

/** Records a file forkpoint itself just wrote with content `hash` (a restore): its stat data, no read. */
export function wroteFile(cache: StatCache, sc: ScanContext, rel: string, hash: string): void {
  const at = rel.lastIndexOf("/");
  const dir = cache.dir(at < 0 ? "" : rel.slice(0, at));
  const name = rel.slice(at + 1);
  const full = `${sc.root}/${rel}`;
  const statAt = BigInt(Date.now()) * 1_000_000n;
  const st = lstatSync(full, { bigint: true, throwIfNoEntry: false });
  if (!st || !st.isFile()) return cache.remove(dir, name, rel);
  const entry = { size: st.size, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs, ino: st.ino, mode: Number(st.mode), hash, racy: false };
  // Written a moment ago: racy, so that the next check reads it (a write by someone else in the same tick is not missed).
  entry.racy = st.mtimeNs >= statAt - RACY_NS;
  cache.setFile(dir, name, rel, entry);
}

/** Records that forkpoint deleted the file at `rel` (a restore). */
export function deletedFile(cache: StatCache, rel: string): void {
  const at = rel.lastIndexOf("/");
  const dir = cache.find(at < 0 ? "" : rel.slice(0, at));
  if (isDir(dir)) cache.remove(dir, rel.slice(at + 1), rel);
}

/** Walks the directory `node` (at `rel`) and everything below it, reconciling the cache with what is there now. */
export function* walkTree(cache: StatCache, sc: ScanContext, node: DirNode, rel: string): Generator<void> {
  const full = rel === "" ? sc.root : `${sc.root}/${rel}`;
  const present = new Set<string>();
  // Names read as text; a directory holding one that is not UTF-8 (shown with U+FFFD) is read again as bytes: such a
  // name may be excluded, else it is refused by name.
  let dirents: import("node:fs").Dirent<string | Buffer>[] = readdirSync(full, { withFileTypes: true });
  if (dirents.some((d) => (d.name as string).includes("\uFFFD"))) dirents = readdirSync(full, { withFileTypes: true, encoding: "buffer" });
  for (const d of dirents) {
    const raw = typeof d.name === "string" ? null : d.name;
    const name = d.name.toString();
    const childRel = join(rel, name);
    if (d.isDirectory()) {
      if (sc.rules.ignored(childRel, true)) continue;
      if (raw) textName(raw, rel);
      present.add(name);
      let child = node.entries.get(name);
      if (!isDir(child)) {
        if (child !== undefined) cache.remove(node, name, childRel);
        child = cache.dir(childRel);
      }
      yield* walkTree(cache, sc, child, childRel);
    } else if (d.isFile()) {
      const childFull = `${full}/${name}`;
      if (sc.skip.has(childFull) || sc.rules.ignored(childRel, false)) continue;
      if (raw) textName(raw, rel);
      present.add(name);
      refreshFile(cache, sc, node, name, childRel, childFull);
      if (sc.full?.()) yield;
    }
  }
  for (const name of [...node.entries.keys()]) if (!present.has(name)) cache.remove(node, name, join(rel, name));
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
  const st = lstatSync(full, { throwIfNoEntry: false });
  if (!st || !(st.isFile() || st.isDirectory())) return cache.remove(dir, name, rel);
  if (st.isDirectory()) {
    if (sc.rules.ignored(rel, true)) return cache.remove(dir, name, rel);
    textName(Buffer.from(name), rel.slice(0, Math.max(0, rel.lastIndexOf("/"))));
    const old = dir.entries.get(name);
    if (isDir(old) && !whole) return;
    if (old !== undefined && !isDir(old)) cache.remove(dir, name, rel);
    yield* walkTree(cache, sc, cache.dir(rel), rel);
    return;
  }
  if (sc.skip.has(full) || sc.rules.ignored(rel, false)) return cache.remove(dir, name, rel);
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
    if ((error as NodeJS.ErrnoException).code !== "ENOENT" && (error as NodeJS.ErrnoException).code !== "ENOTDIR") throw error;
    if (rel === "") throw error;
    return yield* refreshPaths(cache, sc, [rel], new Set());
  }
  const present = new Set(names.map((n) => n.toString()));
  for (const name of [...node.entries.keys()]) if (!present.has(name)) cache.remove(node, name, join(rel, name));
  for (const raw of names) {
    const name = raw.toString();
    if (!isUtf8(raw)) {
      const childRel = join(rel, name);
      const isDirectory = lstatSync(`${sc.root}/${childRel}`, { throwIfNoEntry: false })?.isDirectory() ?? false;
      if (!sc.rules.ignored(childRel, isDirectory)) textName(raw, rel);
      continue;
    }
    yield* refreshEntry(cache, sc, node, name, join(rel, name), false);
  }
}

// The stored form of a directory's files: per file, its name's length (u16) and UTF-8 bytes, size, mtime ns, ctime ns,
// inode (u64 each), mode (u32), flags (u8: 1 = racy) and the content's SHA-256 (32 bytes). Version byte first.
const STAT_VERSION = 1;

export function encodeStatBody(node: DirNode): Buffer {
  const files: [Buffer, FileEntry][] = [];
  let size = 1;
  for (const [name, e] of node.entries) {
    if (isDir(e)) continue;
    const bytes = Buffer.from(name);
    files.push([bytes, e]);
    size += 2 + bytes.length + 8 * 4 + 4 + 1 + 32;
  }
  const out = Buffer.allocUnsafe(size);
  out[0] = STAT_VERSION;
  let at = 1;
  for (const [name, e] of files) {
    at = out.writeUInt16LE(name.length, at);
    at += name.copy(out, at);
    at = out.writeBigUInt64LE(e.size, at);
    at = out.writeBigInt64LE(e.mtimeNs, at);
    at = out.writeBigInt64LE(e.ctimeNs, at);
    at = out.writeBigUInt64LE(e.ino, at);
    at = out.writeUInt32LE(e.mode >>> 0, at);
    at = out.writeUInt8(e.racy ? 1 : 0, at);
    at += out.write(e.hash, at, "hex");
  }
  return out;
}

export function decodeStatBody(body: Buffer): [string, FileEntry][] {
  // An unknown version (a newer forkpoint's) is an empty cache: every file is read again.
  if (body.length === 0 || body[0] !== STAT_VERSION) return [];
  const out: [string, FileEntry][] = [];
  let at = 1;
  while (at < body.length) {
    const len = body.readUInt16LE(at);
    at += 2;
    const name = body.toString("utf8", at, at + len);
    at += len;
    const size = body.readBigUInt64LE(at);
    const mtimeNs = body.readBigInt64LE(at + 8);
    const ctimeNs = body.readBigInt64LE(at + 16);
    const ino = body.readBigUInt64LE(at + 24);
    const mode = body.readUInt32LE(at + 32);
    const racy = body[at + 36] === 1;
    const hash = body.toString("hex", at + 37, at + 69);
    at += 69;
    out.push([name, { size, mtimeNs, ctimeNs, ino, mode, hash, racy }]);
  }
  return out;
}

export { isDir };
