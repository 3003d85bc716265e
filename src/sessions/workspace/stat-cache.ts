// A workspace's stat cache (git's index): what forkpoint last read of each file (size, mtime and ctime in ns, inode,
// mode, content hash), kept as a tree of directories (dir-node.ts) whose tree hashes are cached, so that a scan
// (walk.ts) reads only the files whose stat data changed and a snapshot re-hashes only the directories above them.
import type { SkippedFile } from "../../models/types.js";
import type { StatRow } from "../../store/port/index.js";
import { DirNode, idOf, isDir, join, type FileEntry } from "./dir-node.js";
import { decodeStatBody, encodeStatBody } from "./stat-rows.js";

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
  /** Each tracker maps a path changed since it was registered to its file id before (null: it did not exist). */
  readonly trackers = new Set<Map<string, string | null>>();
  /** Directories with entries that cannot be stored (see `skip`). */
  readonly skippingDirs = new Set<DirNode>();
  /**
   * Files whose last lstat showed more than one link: a write through another of their names (outside the workspace,
   * or in a folder of it) makes no event for this one, so every scan looks at them again (see `refreshLinked`).
   */
  readonly linked = new Set<string>();
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

  /** The id (content hash and mode, file-id.ts) of the file at `rel`, or null. */
  fileId(rel: string): string | null {
    const e = this.find(rel);
    return e === undefined || isDir(e) ? null : idOf(e);
  }

  #dirOf(rel: string, create: boolean): DirNode | undefined {
    let node = this.root;
    if (rel === "") return node;
    for (const part of rel.split("/")) {
      let next = node.entries.get(part);
      if (!isDir(next)) {
        if (!create) return undefined;
        if (next !== undefined) this.#record(join(node.path, part), idOf(next), null);
        node.skipped?.delete(part);
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

  /** `touched`: written again with the same content (new stat data): a tracker counts it among the paths changed. */
  #record(rel: string, before: string | null, after: string | null, touched = false): void {
    if (before === after && !touched) return;
    for (const t of this.trackers) if (!t.has(rel)) t.set(rel, before);
  }

  /** Records every file under `node` (at `rel`) as gone, and its directories as removed. */
  #dropTree(node: DirNode, rel: string): void {
    this.removedDirs.add(rel);
    for (const [name, e] of node.entries) {
      if (isDir(e)) this.#dropTree(e, join(rel, name));
      else this.#record(join(rel, name), idOf(e), null);
    }
  }

  /**
   * Records `name` of `dir` (at `rel`) as something that cannot be stored (an unreadable file, one over the size
   * limit, a FIFO, a socket, a link, a name that is not UTF-8), with why: it is not captured (as if absent), and is
   * reported. Not stored with the cache's rows: a whole walk (the first of every process) finds such entries again.
   */
  skip(dir: DirNode, name: string, rel: string, reason: string): void {
    this.remove(dir, name, rel);
    (dir.skipped ??= new Map()).set(name, reason);
    this.skippingDirs.add(dir);
  }

  /** Everything the cache holds that cannot be stored, by path. */
  skippedFiles(): SkippedFile[] {
    const out: SkippedFile[] = [];
    for (const node of this.skippingDirs) {
      if (!node.skipped?.size || !this.#attached(node)) {
        this.skippingDirs.delete(node);
        continue;
      }
      for (const [name, reason] of node.skipped) out.push({ path: join(node.path, name), reason });
    }
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** Sets the file `name` of `dir` (at `rel`). */
  setFile(dir: DirNode, name: string, rel: string, entry: FileEntry, touched = false): void {
    dir.skipped?.delete(name);
    const old = dir.entries.get(name);
    if (isDir(old)) this.#dropTree(old, rel);
    const before = old === undefined || isDir(old) ? null : idOf(old);
    const after = idOf(entry);
    this.#record(rel, before, after, touched);
    dir.entries.set(name, entry);
    this.#dirty(dir);
    if (before !== after) dir.invalidate();
  }

  /** Removes `name` of `dir` (a file, or a directory and all below it, or something skipped). */
  remove(dir: DirNode, name: string, rel: string): void {
    dir.skipped?.delete(name);
    const old = dir.entries.get(name);
    if (old === undefined) return;
    if (isDir(old)) this.#dropTree(old, rel);
    else this.#record(rel, idOf(old), null);
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
