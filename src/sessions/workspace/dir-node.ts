// The stat cache's in-memory tree: a directory node per directory, a file entry per file as last read, and the tree
// hashes of the snapshot they make (git's cache-tree): a directory's hash is recomputed only when something below it
// changed.
import { sha256 } from "../integrity/hashes.js";
import { executableMode, fileIdOf, treeBodyOf } from "./file-id.js";

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

/** A directory of the cache. `hash`: its tree's hash (undefined: to compute; null: no captured file below it). */
export class DirNode {
  readonly entries = new Map<string, FileEntry | DirNode>();
  hash: string | null | undefined = undefined;
  /** Its own files changed since the cache was last stored. */
  statDirty = false;
  /** Counts its own files' changes: rows stored for an older version leave it dirty. */
  version = 0;
  /** Its own entries that cannot be stored (not captured), by name, with why (see `StatCache.skip`). */
  skipped: Map<string, string> | null = null;
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

export const isDir = (e: FileEntry | DirNode | undefined): e is DirNode => e instanceof DirNode;
export const join = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`);

/** The id a snapshot holds the file by: its content hash and executable bit (file-id.ts). */
export const idOf = (e: FileEntry): string => fileIdOf(e.hash, executableMode(e.mode));

/**
 * A directory's tree body: a row per file (see file-id.ts) and `["name/", hash]` per subdirectory (empty ones left
 * out), by name.
 */
export function treeBody(node: DirNode): string {
  const rows: [string, string][] = [];
  for (const [name, e] of node.entries) {
    if (isDir(e)) {
      const h = treeHash(e);
      if (h !== null) rows.push([`${name}/`, h]);
    } else rows.push([name, idOf(e)]);
  }
  return treeBodyOf(rows);
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
