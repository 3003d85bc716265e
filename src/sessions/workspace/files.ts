// The file-system side of restores: what may be written, applying a snapshot's changes to the directory (each file
// staged, then renamed into place), leftovers of a crashed restore, and the unified diff of changes.
import { linkSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { basename, dirname, join, relative, sep } from "node:path";
import { sha256 } from "../integrity/hashes.js";
import { contentOf, gitMode, isExecutable, modeOf } from "./file-id.js";

// Loaded on first use: only sessions with a workspace need it.
const load = createRequire(import.meta.url);
let diffModule: typeof import("diff") | undefined;
const textPatch = (from: string, to: string, before: string, after: string): string =>
  (diffModule ??= load("diff") as typeof import("diff")).createTwoFilesPatch(from, to, before, after, "", "", { context: 3 });

/**
 * Why `paths` cannot be written under `dir` (a symbolic link, or a file where a directory must be, anywhere on the
 * way), or null. Writing through a link could change a file outside the workspace.
 */
export function assertRestorable(dir: string, paths: readonly string[]): string | null {
  const seen = new Map<string, "dir" | "file" | "link" | "none">();
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
  for (const path of paths) {
    const parts = path.split("/");
    if (parts.some((p) => p === "" || p === "." || p === "..")) return `${path} is not a plain relative path`;
    let at = dir;
    for (let i = 0; i < parts.length; i++) {
      at = join(at, parts[i]!);
      const k = kind(at);
      if (k === "none") break;
      if (k === "link") return `${relative(dir, at)} is a symbolic link`;
      if (i < parts.length - 1 && k !== "dir") return `${relative(dir, at)} is a file where ${path} needs a directory`;
      if (i === parts.length - 1 && k === "dir") return `${path} is a directory`;
    }
  }
  return null;
}

/** Restores stage each file beside its destination (`<file>.forkpoint-<pid>.tmp`), then rename it into place. */
const STAGED_SUFFIX = ".forkpoint-";
/** The longest file name most file systems take, in bytes. */
const MAX_NAME_BYTES = 255;

/** The name a file a restore by `pid` replaces is linked aside under until it is unlinked: `<name>.forkpoint-<pid>.old`. */
function asideName(name: string, pid: number): string {
  const long = `${name}${STAGED_SUFFIX}${pid}.old`;
  return Buffer.byteLength(long) <= MAX_NAME_BYTES ? long : `${STAGED_SUFFIX}${pid}-${sha256(name).slice(0, 16)}.old`;
}

/**
 * The name a restore by `pid` stages `name` under: `<name>.forkpoint-<pid>.tmp`, or, when that would be too long a
 * file name, `.forkpoint-<pid>-<16 hex of the name's SHA-256>.tmp`.
 */
function stagedName(name: string, pid: number): string {
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
 * and never unlinked (their process died): forkpoint's own leftovers. A name that is itself one of `tracked` is the user's file, and is kept.
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
    for (const name of [...names].flatMap((n) => pids.flatMap((pid) => [stagedName(n, pid), asideName(n, pid)]))) {
      if (!found.has(name)) continue;
      const path = relative(dir, join(folder, name)).split(sep).join("/");
      if (tracked(path)) continue;
      rmSync(join(folder, name), { force: true });
      removed.push(path);
    }
  }
  return removed;
}

/** Writes a staged file, new, with `mode` (before the umask); a leftover of that name (its mode unknown) is replaced. */
function writeStaged(temp: string, content: Buffer, mode: number): void {
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

/**
 * Applies `changes` to `dir` (which holds their `from` side): every new content is first written beside its place
 * under a temporary name; if one fails (disk full, permissions, a damaged content), the temporary files are removed
 * and the directory is as it was. Then deletes (first, so a name that differs only in case on a case-insensitive file
 * system is not deleted after being written), then renames into place. `moved.any` turns true once the directory
 * starts to change. Check `assertRestorable` first.
 */
export async function restoreChanges(
  dir: string,
  changes: readonly { path: string; to: string | null }[],
  contents: (hashes: string[]) => Promise<ReadonlyMap<string, Buffer>>,
  moved: { any: boolean },
): Promise<{ written: string[]; deleted: string[] }> {
  const writes = changes.filter((c) => c.to !== null);
  const staged: { path: string; full: string; temp: string }[] = [];
  try {
    for (let i = 0; i < writes.length; i += STAGE_BATCH) {
      const batch = writes.slice(i, i + STAGE_BATCH);
      const got = await contents(batch.map((c) => contentOf(c.to!)));
      for (const c of batch) {
        const full = join(dir, ...c.path.split("/"));
        mkdirSync(dirname(full), { recursive: true });
        const temp = join(dirname(full), stagedName(basename(full), process.pid));
        writeStaged(temp, got.get(contentOf(c.to!))!, modeOf(c.to!));
        staged.push({ path: c.path, full, temp });
      }
    }
  } catch (error) {
    for (const s of staged) rmSync(s.temp, { force: true });
    throw error;
  }
  const deleted: string[] = [];
  const aside: string[] = [];
  let renamed = 0;
  let linking = true;
  try {
    for (const c of changes) {
      if (c.to !== null) continue;
      moved.any = true;
      rmSync(join(dir, ...c.path.split("/")), { force: true });
      deleted.push(c.path);
    }
    for (; renamed < staged.length; renamed++) {
      moved.any = true;
      const { full, temp } = staged[renamed]!;
      // The file replaced is first linked aside (and unlinked below, off this thread): a rename that drops the last
      // link of a file whose data is still being written back waits for that write (ext4 starts it at each such rename),
      // so replacing files a restore wrote a moment ago (undo, then redo) took tens of ms per file.
      if (linking) {
        const old = join(dirname(full), asideName(basename(full), process.pid));
        try {
          linkSync(full, old);
          aside.push(old);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code !== "ENOENT") linking = code === "EEXIST";
          if (code === "EEXIST") rmSync(old, { force: true });
        }
      }
      renameSync(temp, full);
    }
  } catch (error) {
    for (const s of staged.slice(renamed)) rmSync(s.temp, { force: true });
    await Promise.all(aside.map((old) => rm(old, { force: true })));
    throw error;
  }
  await Promise.all(aside.map((old) => rm(old, { force: true })));
  return { written: staged.map((s) => s.path), deleted };
}

/** How a change of the executable bit shows in a patch, as git shows it ("" when the mode is the same). */
function modeLines(a: string | null, b: string | null): string {
  if (a === null) return b !== null && isExecutable(b) ? `new file mode ${gitMode(b)}\n` : "";
  if (b === null) return isExecutable(a) ? `deleted file mode ${gitMode(a)}\n` : "";
  return isExecutable(a) === isExecutable(b) ? "" : `old mode ${gitMode(a)}\nnew mode ${gitMode(b)}\n`;
}

/** A unified diff of `changes` (binary files are named, not shown; a change of mode is shown as git shows it). */
export function filesPatch(
  changes: readonly { path: string; from: string | null; to: string | null }[],
  content: (hash: string) => Buffer,
): string {
  let patch = "";
  for (const { path, from: a, to: b } of changes) {
    const before = a === null ? Buffer.alloc(0) : content(contentOf(a));
    const after = b === null ? Buffer.alloc(0) : content(contentOf(b));
    const from = a === null ? "/dev/null" : `a/${path}`;
    const to = b === null ? "/dev/null" : `b/${path}`;
    const modes = modeLines(a, b);
    if (before.includes(0) || after.includes(0)) patch += `${modes}Binary files ${from} and ${to} differ\n`;
    else {
      const text = textPatch(from, to, before.toString("utf8"), after.toString("utf8"));
      // After its "===" line, as git puts them after its "diff --git" line.
      const at = text.indexOf("\n") + 1;
      patch += text.slice(0, at) + modes + text.slice(at);
    }
  }
  return patch;
}
