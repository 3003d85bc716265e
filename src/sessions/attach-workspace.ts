// attachWorkspace: a directory whose files checkpoints capture and moves restore.
import type { Step, Tx } from "../store/port/index.js";
import { THIS_HOST, isLocal } from "./workspace/host.js";
import { resolve } from "node:path";
import { ValidationError } from "../models/errors.js";
import { attachWorkspaceInput, directoryPath, parseInput, parseOptions } from "../models/inputs.js";
import type { WorkspaceInfo } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession } from "./core/owned.js";
import { captureStorable, captureStored, saveCapture, saveCaptureStats, takeCapture, type Capture } from "./workspace/capture.js";
import { assertNoRestorePending } from "./workspace/restore-guards.js";
import { resumingOwnRestore } from "./workspace/resume-own.js";
import { assertNothingUnsaved } from "./workspace/unsaved-changes.js";
import { canonicalExclude } from "./workspace/exclude-list.js";
import { realDir, sameFilesConfig, type FilesConfig } from "./workspace/snapshots.js";

export async function attachWorkspace(
  ctx: EngineContext,
  ref: SessionRef,
  dirInput: unknown,
  options: unknown = {},
): Promise<WorkspaceInfo> {
  const given = parseInput(directoryPath, dirInput, "dir");
  const o = parseOptions(attachWorkspaceInput, options, "options");
  const dir = realDir(given);
  if (!dir) throw new ValidationError("dir", `${resolve(given)} is not a directory`);
  // Stored canonical: the same rules listed otherwise are the same configuration (rows of earlier versions compare so too).
  const exclude = JSON.stringify(canonicalExclude(o.exclude ?? []));
  const config = { sessionId: ref.id, dir, exclude, gitignore: o.gitignore ?? true };
  const pending = await resumingOwnRestore(ctx, ref.id, async () => {
    const ws = await ctx.store.read((tx) => pendingRestoreUnit(tx, ref));
    if (ws) assertNoRestorePending(ws);
    return ws;
  });
  // The stat cache of the same directory and rules is kept (its files are not read again); any other starts empty.
  const fresh = !pending || !sameFilesConfig(pending, config);
  for (let attempt = 0; ; attempt++) {
    // Leaving this host's directory or rules: a change no checkpoint keeps would be out of forkpoint's sight (see
    // unsaved-changes.ts). A directory gone holds none; another host's cannot be looked at from here.
    const left = attempt === 0 ? pending : await ctx.store.read((tx) => tx.getWorkspace(ref.id));
    const leaving = left && !sameFilesConfig(left, config) && isLocal(left) && realDir(left.dir) !== null ? left : undefined;
    if (leaving) await assertNothingUnsaved(ctx, ref, leaving, leaving.dir === dir ? "with other options" : `as ${dir}`);
    const checked = leaving?.manifestId;
    const capture = await takeCapture(ctx, { ...config, manifestId: null }, { fresh: fresh && attempt === 0, allRows: true });
    if (await ctx.store.write({ sessionId: ref.id }, (tx) => attachWorkspaceUnit(tx, ref, capture, ctx, attempt, checked))) {
      await captureStored(ctx, capture);
      return { dir, exclude: o.exclude ?? [], files: capture.files, ...(capture.skipped.length > 0 ? { skipped: capture.skipped } : {}) };
    }
  }
}

function* attachWorkspaceUnit(tx: Tx, ref: SessionRef, capture: Capture, ctx: EngineContext, attempt: number, checked: number | undefined) {
  yield* ownedSession(tx, ref.id, ref.userId);
  const ws = yield* tx.getWorkspace(ref.id);
  if (ws) assertNoRestorePending(ws);
  // What forkpoint saw of the files left changed since they were checked (a call or move meanwhile): checked again.
  if (checked !== undefined && ws?.manifestId !== checked) return false;
  // A content a prune took since it was stored: captured again (before any write).
  if (!(yield* captureStorable(tx, capture, undefined)) && attempt < 3) return false;
  // Attached again as it was (same directory, rules and host): what forkpoint last saw stays, so files changed since
  // stay drift. Taking the directory as it is now would make those changes look saved, and a rewind overwrite them.
  const again = ws !== undefined && sameFilesConfig(ws, capture) && isLocal(ws);
  // Back to a configuration a checkpoint captured under (after other options or another directory): what the newest
  // such checkpoint holds is what forkpoint last saw there, so hand edits made since stay drift, not look saved.
  const seen = again ? ws.manifestId : yield* lastCapturedUnder(tx, ref, capture);
  const manifestId = seen !== undefined ? (yield* tx.insertTrees(capture.trees), seen) : yield* saveCapture(tx, capture);
  yield* tx.putWorkspace({
    sessionId: ref.id,
    dir: capture.dir,
    exclude: capture.exclude,
    gitignore: capture.gitignore,
    manifestId,
    updatedAt: ctx.now(),
    host: THIS_HOST,
  });
  yield* saveCaptureStats(tx, capture);
  return true;
}

/** The snapshot of the session's newest checkpoint captured under `config` (directory and rules), if any. */
function* lastCapturedUnder(tx: Tx, ref: SessionRef, config: FilesConfig): Step<number | undefined> {
  const checkpoints = yield* tx.sessionCheckpoints(ref.userId, ref.id);
  for (let i = checkpoints.length - 1; i >= 0; i--) {
    const files = yield* tx.checkpointManifest(checkpoints[i]!.id);
    if (files && sameFilesConfig(files, config)) return files.manifestId;
  }
  return undefined;
}

function* pendingRestoreUnit(tx: Tx, ref: SessionRef) {
  yield* ownedSession(tx, ref.id, ref.userId);
  return yield* tx.getWorkspace(ref.id);
}
