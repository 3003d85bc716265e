// What a call's arguments name in the workspace: the files there as its run found them (one that changed no file) or
// as a call recorded with `recordToolCall` left them, the record its undo and replay are weighed against.
import type { JsonValue } from "../../models/json.js";
import type { WorkspaceRow } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import type { ScannedChanges } from "./absorb.js";
import { idOf, isDir, join as joinPath, type DirNode } from "./dir-node.js";
import { isLocal } from "./host.js";
import { namedPaths, reaches } from "./named-paths.js";
import { restoreCheck } from "./prepare-restore.js";
import { scan, stateOf, type WorkspaceState } from "./state.js";

/**
 * Files listed at most for one call's named folders: beyond, a folder's are not recorded (see `withNamedFiles`). Each
 * no-change call naming a folder (a grep over the repository) stores its list, so it stays small: ~100 KB at most.
 */
const MAX_NAMED_FILES = 1_000;

/**
 * `scanned`, for call `args`'s run: when it changed no file, with what it found where its arguments name (`named`): per
 * named path, the file there (null: none, or a folder) and every file under it. A folder whose files would pass
 * `MAX_NAMED_FILES` is left out whole: its drift is then judged from the snapshots (see `writtenPaths`).
 */
export function withNamedFiles(scanned: ScannedChanges | null, dir: string, args: JsonValue): ScannedChanges | null {
  if (!scanned || scanned.changed.length > 0) return scanned;
  const named = namedFiles(scanned.before.state.cache, dir, args);
  return named.size > 0 ? { ...scanned, named } : scanned;
}

/**
 * Records what the files hold where the arguments of call `callId`, recorded with `recordToolCall` (run elsewhere),
 * name, as `withNamedFiles` reads it: its undo and replay write there (see `recordedDrift` in conversation-drift.ts).
 * Never throws: without a local workspace, or when the files cannot be read, nothing is recorded (the call then refuses
 * no move, as before such records).
 */
export async function recordFilesNamed(ctx: EngineContext, sessionId: string, callId: string, args: JsonValue): Promise<void> {
  try {
    const ws = await ctx.store.read((tx) => tx.getWorkspace(sessionId));
    if (!ws || !isLocal(ws)) return;
    const state = await stateOf(ctx, ws);
    const big: string[] = [];
    const files = await state.exclusive(async () => {
      await scan(ctx, state);
      return namedFiles(state.cache, ws.dir, args, big);
    });
    if (big.length > 0) await withDriftedUnder(ctx, ws, state, big, files);
    if (files.size > 0) await ctx.store.write({ sessionId }, (tx) => tx.putRecordedFiles(callId, files));
  } catch (error) {
    ctx.logger.warn(`forkpoint: reading the workspace of session ${sessionId} after recorded call ${callId} failed`, error);
  }
}

/**
 * In a recorded call's record (see `recordFilesNamed`), a named folder with too many files to list: only those changed
 * since forkpoint last saw them as it was recorded (the call's own writes among them) are listed, so a file there that
 * drifts later and is not listed changed since the call was recorded. No file id is ever this.
 */
export const DRIFTED_ONLY = "*";

/**
 * `files` (a recorded call's named files), with the named folders too big to list (`big`) listed as `DRIFTED_ONLY` does,
 * while every file listed stays within `MAX_NAMED_FILES`; a folder beyond is left out, as before such records.
 */
async function withDriftedUnder(
  ctx: EngineContext,
  ws: WorkspaceRow,
  state: WorkspaceState,
  big: readonly string[],
  files: Map<string, string | null>,
): Promise<void> {
  let drifted: string[];
  try {
    drifted = (await restoreCheck(ctx, ws, ws.manifestId)).drifted;
  } catch {
    return;
  }
  await state.exclusive(async () => {
    let listed = files.size;
    for (const folder of big) {
      const under = drifted.filter((path) => reaches(new Set([folder]), path) && !files.has(path));
      if (listed + under.length > MAX_NAMED_FILES) continue;
      listed += under.length;
      files.set(folder, DRIFTED_ONLY);
      for (const path of under) files.set(path, state.cache.fileId(path));
    }
  });
}

/**
 * Per path `args` names in `dir`: the file there (null: none, or a folder) and every file under it (see
 * `withNamedFiles`); a folder whose files would pass `MAX_NAMED_FILES` is left out, and pushed to `big` when given.
 */
function namedFiles(cache: WorkspaceState["cache"], dir: string, args: JsonValue, big?: string[]): Map<string, string | null> {
  const named = new Map<string, string | null>();
  let listed = 0;
  for (const path of namedPaths(dir, args)) {
    const at = cache.find(path);
    const files = isDir(at) ? filesUnder(at, MAX_NAMED_FILES - listed) : [];
    if (files === undefined) {
      big?.push(path);
      continue;
    }
    listed += files.length;
    named.set(path, at === undefined || isDir(at) ? null : idOf(at));
    for (const [file, id] of files) named.set(file, id);
  }
  return named;
}

/** The files under `node` with their ids; undefined when more than `max`. */
function filesUnder(node: DirNode, max: number): [string, string][] | undefined {
  const out: [string, string][] = [];
  const queue = [node];
  for (let d = queue.pop(); d !== undefined; d = queue.pop()) {
    for (const [name, e] of d.entries) {
      if (isDir(e)) queue.push(e);
      else if (out.push([joinPath(d.path, name), idOf(e)]) > max) return undefined;
    }
  }
  return out;
}
