// Stored snapshots' trees of hashed directories (git's tree objects), read, built, compared and applied: a tree diff
// walks only the directories whose hashes differ.
import { LRUCache } from "lru-cache";
import { IntegrityError } from "../../models/errors.js";
import type { Step, Tx } from "../../store/port/index.js";
import { sha256 } from "../integrity/hashes.js";
import { DirNode, EMPTY_TREE, EMPTY_TREE_BODY, idOf, isDir, treeBody, treeHash } from "./dir-node.js";
import { entriesOfRows, treeBodyOf } from "./file-id.js";

/** A tree's entries: name → a file's id (file-id.ts), or "name/" → a subdirectory's tree hash; in name order. */
export type TreeEntries = ReadonlyMap<string, string>;

/** Parsed trees by hash (content-addressed: never stale), shared by every workspace of the process. */
const parsedTrees = new LRUCache<string, TreeEntries>({ maxSize: 16 << 20, sizeCalculation: (t) => 64 + t.size * 100 });

export function parseTree(hash: string, body: string): TreeEntries {
  if (sha256(body) !== hash) throw new IntegrityError(`the stored directory ${hash} of a workspace snapshot does not match its hash`);
  let rows: unknown;
  try {
    rows = JSON.parse(body);
  } catch {
    rows = null;
  }
  if (!Array.isArray(rows)) throw new IntegrityError(`the stored directory ${hash} of a workspace snapshot is malformed`);
  return entriesOfRows(rows as unknown[][]);
}

/**
 * Reads trees through a cache (content-addressed, so shared by every database of the process), or, `checked`, each
 * from the database (verify). A snapshot stored before trees (`{ path: hash }`) is turned into trees held here only,
 * for the operation that reads it (`ephemeral`).
 */
export class TreeReader {
  readonly #read = new Map<string, TreeEntries>();
  constructor(readonly checked = false) {}
  readonly ephemeral = new Map<string, TreeEntries>();
  /** The bodies of `ephemeral`'s trees: stored along with a snapshot made from one of them. */
  readonly ephemeralBodies = new Map<string, string>();

  /** Makes `hashes` readable with `entries`, in one query for those not cached. */
  *load(tx: Tx, hashes: Iterable<string>): Step<void> {
    const known = (h: string) => h === EMPTY_TREE || this.ephemeral.has(h) || this.#read.has(h) || (!this.checked && parsedTrees.has(h));
    const missing = [...new Set(hashes)].filter((h) => !known(h));
    if (missing.length === 0) return;
    for (const r of yield* tx.getTrees(missing)) {
      const t = parseTree(r.hash, r.body);
      this.#read.set(r.hash, t);
      parsedTrees.set(r.hash, t);
    }
    for (const h of missing) {
      if (!this.#read.has(h)) throw new IntegrityError(`the stored directory ${h} of a workspace snapshot is missing`);
    }
  }

  entries(hash: string): TreeEntries {
    if (hash === EMPTY_TREE) return new Map();
    const t = this.ephemeral.get(hash) ?? this.#read.get(hash) ?? (this.checked ? undefined : parsedTrees.get(hash));
    if (!t) throw new Error(`tree ${hash} was not loaded`);
    return t;
  }

  /** The root tree of manifest `manifestId`. */
  *rootOf(tx: Tx, manifestId: number): Step<string> {
    const m = yield* tx.getManifest(manifestId);
    if (!m) throw new IntegrityError(`the workspace snapshot ${manifestId} is missing from the database`);
    if (m.root !== null) return m.root;
    let files: Record<string, string>;
    try {
      files = JSON.parse(m.body) as Record<string, string>;
    } catch {
      throw new IntegrityError(`the workspace snapshot ${manifestId} does not match its hash`);
    }
    if (legacyManifestHash(files) !== m.hash) throw new IntegrityError(`the workspace snapshot ${manifestId} does not match its hash`);
    const { root, trees } = treesOfFiles(Object.entries(files));
    for (const t of trees) {
      this.ephemeral.set(t.hash, parseTree(t.hash, t.body));
      this.ephemeralBodies.set(t.hash, t.body);
    }
    return root;
  }
}

/** The hash a snapshot stored before trees is addressed by: its `{ path: hash }` JSON with sorted keys. */
export function legacyManifestHash(files: Record<string, string>): string {
  const sorted: Record<string, string> = {};
  for (const p of Object.keys(files).sort()) sorted[p] = files[p]!;
  return sha256(JSON.stringify(sorted));
}

/** The trees of a list of files: the root's hash and every tree (bodies included). */
export function treesOfFiles(files: Iterable<readonly [string, string]>): { root: string; trees: { hash: string; body: string }[] } {
  const root = new DirNode(null, "");
  for (const [path, hash] of files) {
    const parts = path.split("/");
    let node = root;
    for (let i = 0; i < parts.length - 1; i++) {
      let next = node.entries.get(parts[i]!);
      if (!isDir(next)) node.entries.set(parts[i]!, (next = new DirNode(node, parts[i]!)));
      node = next;
    }
    node.entries.set(parts[parts.length - 1]!, { size: 0n, mtimeNs: 0n, ctimeNs: 0n, ino: 0n, mode: 0, hash, racy: false });
  }
  const trees: { hash: string; body: string }[] = [];
  const visit = (node: DirNode) => {
    const h = treeHash(node);
    if (h === null) return;
    trees.push({ hash: h, body: treeBody(node) });
    for (const e of node.entries.values()) if (isDir(e)) visit(e);
  };
  visit(root);
  return { root: treeHash(root) ?? EMPTY_TREE, trees: trees.length ? trees : [{ hash: EMPTY_TREE, body: EMPTY_TREE_BODY }] };
}

/** One side of a comparison: a stored tree (by hash), a directory of the stat cache, or nothing. */
type Side = string | DirNode | null;
const sideHash = (s: Side): string | null => (s === null ? null : typeof s === "string" ? s : (treeHash(s) ?? null));

/** A file that differs between two snapshots: its id (content hash and mode, file-id.ts) on each side (null: absent there). */
export interface FileChange {
  path: string;
  from: string | null;
  to: string | null;
}

/**
 * What differs between two trees, file by file, in path order; directories with equal hashes are skipped whole, and
 * the stored trees needed are read a level at a time. `onDir` sees each stat-cache directory found different, with
 * its tree hash (to store it).
 */
export function* diffTrees(
  tx: Tx,
  reader: TreeReader,
  a: Side,
  b: Side,
  onDir?: (node: DirNode, hash: string) => void,
): Step<FileChange[]> {
  const changes: FileChange[] = [];
  let level: [string, Side, Side][] = [["", a, b]];
  while (level.length > 0) {
    const differing = level.filter(([, x, y]) => sideHash(x) !== sideHash(y));
    yield* reader.load(
      tx,
      differing.flatMap(([, x, y]) => [x, y].filter((s): s is string => typeof s === "string")),
    );
    const next: [string, Side, Side][] = [];
    for (const [prefix, x, y] of differing) {
      const hx = sideHash(x);
      const hy = sideHash(y);
      if (x instanceof DirNode && hx !== null) onDir?.(x, hx);
      if (y instanceof DirNode && hy !== null) onDir?.(y, hy);
      const ex = entriesOf(reader, x, hx);
      const ey = entriesOf(reader, y, hy);
      const visit = (key: string, vx: Side, vy: Side) => {
        if (key.endsWith("/")) next.push([`${prefix}${key}`, vx, vy]);
        else if (vx !== vy) changes.push({ path: prefix + key, from: vx as string | null, to: vy as string | null });
      };
      for (const [key, vx] of ex) visit(key, vx, ey.get(key) ?? null);
      for (const [key, vy] of ey) if (!ex.has(key)) visit(key, null, vy);
    }
    level = next;
  }
  return changes.sort((p, q) => (p.path < q.path ? -1 : p.path > q.path ? 1 : 0));
}

/** A side's entries: a file's value is its content hash, a subdirectory's ("name/") its stored hash or node. */
function entriesOf(reader: TreeReader, s: Side, hash: string | null): ReadonlyMap<string, Side> {
  if (s === null || hash === null) return new Map();
  if (typeof s === "string") return reader.entries(s);
  const out = new Map<string, Side>();
  for (const [name, e] of s.entries) {
    if (isDir(e)) {
      if (treeHash(e) !== null) out.set(`${name}/`, e);
    } else out.set(name, idOf(e));
  }
  return out;
}

/**
 * Applies file changes (path → new hash, or null to remove) to the stored tree `root`: the directories along the
 * changed paths are rebuilt, everything else is shared. Returns the new root and the new trees.
 */
export function* applyChanges(
  tx: Tx,
  reader: TreeReader,
  root: string,
  changes: ReadonlyMap<string, string | null>,
): Step<{ root: string; trees: { hash: string; body: string }[] }> {
  // The directories to rebuild (every ancestor of a changed path), with the changes of each.
  const filesIn = new Map<string, [string, string | null][]>();
  const subdirsOf = new Map<string, Set<string>>();
  for (const [path, hash] of changes) {
    const dir = parentOf(path);
    let list = filesIn.get(dir);
    if (!list) filesIn.set(dir, (list = []));
    list.push([baseOf(path), hash]);
    for (let d = dir; d !== ""; d = parentOf(d)) {
      let subs = subdirsOf.get(parentOf(d));
      if (!subs) subdirsOf.set(parentOf(d), (subs = new Set()));
      if (subs.has(d)) break;
      subs.add(d);
    }
  }
  // Their stored hashes (null: new), read a level at a time from the root down.
  const stored = new Map<string, string | null>([["", root]]);
  const order: string[] = [];
  for (let level = [""]; level.length > 0;) {
    order.push(...level);
    yield* reader.load(
      tx,
      level.map((p) => stored.get(p)).filter((h): h is string => typeof h === "string"),
    );
    const next: string[] = [];
    for (const p of level) {
      const h = stored.get(p) ?? null;
      const entries = h === null ? new Map<string, string>() : reader.entries(h);
      for (const q of subdirsOf.get(p) ?? []) {
        stored.set(q, entries.get(`${baseOf(q)}/`) ?? null);
        next.push(q);
      }
    }
    level = next;
  }
  // Rebuilt deepest first: each directory's entries with its rebuilt subdirectories, then its changed files.
  const rebuilt = new Map<string, string | null>();
  const trees: { hash: string; body: string }[] = [];
  for (const p of order.reverse()) {
    const h = stored.get(p) ?? null;
    const entries = new Map(h === null ? [] : reader.entries(h));
    for (const q of subdirsOf.get(p) ?? []) {
      const qh = rebuilt.get(q) ?? null;
      if (qh === null) entries.delete(`${baseOf(q)}/`);
      else entries.set(`${baseOf(q)}/`, qh).delete(baseOf(q));
    }
    for (const [name, hash] of filesIn.get(p) ?? []) {
      if (hash === null) entries.delete(name);
      else entries.set(name, hash).delete(`${name}/`);
    }
    if (entries.size === 0 && p !== "") {
      rebuilt.set(p, null);
      continue;
    }
    const body = treeBodyOf(entries);
    const hash = sha256(body);
    rebuilt.set(p, hash);
    trees.push({ hash, body });
  }
  return { root: rebuilt.get("")!, trees };
}

const parentOf = (p: string) => (p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "");
const baseOf = (p: string) => p.slice(p.lastIndexOf("/") + 1);

/** Those of `paths` that are files of the tree `root`. */
export function* filesIn(tx: Tx, reader: TreeReader, root: string, paths: Iterable<string>): Step<Set<string>> {
  return new Set((yield* filesAt(tx, reader, root, paths)).keys());
}

/** The file ids of those of `paths` that are files of the tree `root`. */
export function* filesAt(tx: Tx, reader: TreeReader, root: string, paths: Iterable<string>): Step<Map<string, string>> {
  const found = new Map<string, string>();
  for (const path of paths) {
    const parts = path.split("/");
    let tree: string | undefined = root;
    for (let i = 0; i < parts.length - 1 && tree !== undefined; i++) {
      yield* reader.load(tx, [tree]);
      tree = reader.entries(tree).get(`${parts[i]}/`);
    }
    if (tree === undefined) continue;
    yield* reader.load(tx, [tree]);
    const id = reader.entries(tree).get(parts[parts.length - 1]!);
    if (id !== undefined) found.set(path, id);
  }
  return found;
}

/** Every file of the tree `root` (path, hash), in path order. */
export function* listFiles(tx: Tx, reader: TreeReader, root: string): Step<[string, string][]> {
  return (yield* diffTrees(tx, reader, null, root)).map((c) => [c.path, c.to!] as [string, string]);
}
