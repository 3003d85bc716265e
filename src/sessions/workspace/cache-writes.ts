// What a restore tells the stat cache: the files it wrote (their stat data, no read) or deleted, and, before it
// replaces or deletes a file, whether that file still is what the cache says (someone may have changed it since).
import { lstatSync, readFileSync, type BigIntStats } from "node:fs";
import { sha256 } from "../integrity/hashes.js";
import { idOf, isDir } from "./dir-node.js";
import { contentOf, executableMode, fileIdOf } from "./file-id.js";
import type { StatCache } from "./stat-cache.js";
import { RACY_NS, codeOf, sameStat, type ScanContext } from "./walk.js";

/** Records a file forkpoint itself just wrote as file `id` (a restore): its stat data, no read. */
export function wroteFile(cache: StatCache, sc: ScanContext, rel: string, id: string): void {
  const at = rel.lastIndexOf("/");
  const dir = cache.dir(at < 0 ? "" : rel.slice(0, at));
  const name = rel.slice(at + 1);
  const full = `${sc.root}/${rel}`;
  const statAt = BigInt(Date.now()) * 1_000_000n;
  const st = lstatSync(full, { bigint: true, throwIfNoEntry: false });
  if (!st || !st.isFile()) return cache.remove(dir, name, rel);
  const entry = {
    size: st.size,
    mtimeNs: st.mtimeNs,
    ctimeNs: st.ctimeNs,
    ino: st.ino,
    mode: Number(st.mode),
    hash: contentOf(id),
    racy: false,
  };
  // Written a moment ago: racy, so that the next check reads it (a write by someone else in the same tick is not missed).
  entry.racy = st.mtimeNs >= statAt - RACY_NS;
  cache.setFile(dir, name, rel, entry);
}

/**
 * Whether the path `rel` still is what the cache says it was: file `id` (its stat data unchanged and not racy, else its
 * content and mode read again), or, `id` null, no file (nothing, or a directory). A restore asks it of each file right
 * before replacing or deleting it: what someone changed since the restore checked the directory is never overwritten.
 */
export function stillIs(cache: StatCache, root: string, rel: string, id: string | null): boolean {
  let st: BigIntStats | undefined;
  try {
    st = lstatSync(`${root}/${rel}`, { bigint: true, throwIfNoEntry: false });
  } catch (error) {
    if (codeOf(error) !== "ENOTDIR") throw error;
  }
  if (id === null) return !st || st.isDirectory();
  if (!st?.isFile()) return false;
  const e = cache.find(rel);
  if (e !== undefined && !isDir(e) && idOf(e) === id && !e.racy && sameStat(e, st)) return true;
  try {
    return fileIdOf(sha256(readFileSync(`${root}/${rel}`)), executableMode(Number(st.mode))) === id;
  } catch {
    return false;
  }
}

/** Records that forkpoint deleted the file at `rel` (a restore). */
export function deletedFile(cache: StatCache, rel: string): void {
  const at = rel.lastIndexOf("/");
  const dir = cache.find(at < 0 ? "" : rel.slice(0, at));
  if (isDir(dir)) cache.remove(dir, rel.slice(at + 1), rel);
}
