// The file-system side of workspaces: reading a directory into a snapshot (path → SHA-256 of its content), making the
// directory match a snapshot again, and the unified diff between two snapshots.
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { createTwoFilesPatch } from "diff";
import ignore from "ignore";
import { PayloadTooLargeError } from "../models/errors.js";

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

const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

/**
 * Reads every regular file under `dir` that `exclude` (.gitignore patterns) and `skip` (absolute paths, e.g. the
 * database itself) leave in. Symbolic links are not followed. Each file is at most `maxBytes`.
 */
export function scanWorkspace(dir: string, exclude: readonly string[], skip: ReadonlySet<string>, maxBytes: number): Snapshot {
  const ig = ignore().add([...exclude]);
  const found: [string, SnapshotFile][] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const full = join(at, entry.name);
      const rel = relative(dir, full).split(sep).join("/");
      if (entry.isDirectory()) {
        if (!ig.ignores(`${rel}/`)) walk(full);
      } else if (entry.isFile() && !skip.has(full) && !ig.ignores(rel)) {
        const size = lstatSync(full).size;
        if (size > maxBytes) throw new PayloadTooLargeError(`workspace file ${rel}`, `is ${size} bytes, over the limit of ${maxBytes}; exclude it`, maxBytes);
        const content = readFileSync(full);
        found.push([rel, { hash: sha256(content), content }]);
      }
    }
  };
  walk(dir);
  found.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return new Map(found);
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

/** Makes `dir` hold exactly `target`'s files (of those `current`, a fresh scan, holds): writes and deletes. */
export function restoreWorkspace(
  dir: string,
  current: Snapshot,
  target: Record<string, string>,
  content: (hash: string) => Buffer,
): { written: string[]; deleted: string[] } {
  const written: string[] = [];
  const deleted: string[] = [];
  for (const [path, hash] of Object.entries(target)) {
    if (current.get(path)?.hash === hash) continue;
    const full = join(dir, ...path.split("/"));
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content(hash));
    written.push(path);
  }
  for (const path of current.keys()) {
    if (path in target) continue;
    rmSync(join(dir, ...path.split("/")), { force: true });
    deleted.push(path);
  }
  return { written, deleted };
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
    else patch += createTwoFilesPatch(from, to, before.toString("utf8"), after.toString("utf8"), "", "", { context: 3 });
  }
  return patch;
}
