// diffFiles: what changed in the workspace's files between a checkpoint and another, or the disk.
import { readFileSync } from "node:fs";
import type { Tx } from "../store/port/index.js";
import { diffFilesOptions, idSchema, parseInput, parseOptions } from "../models/inputs.js";
import type { FilesDiff, SkippedFile } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession, sessionCheckpoint } from "./core/owned.js";
import { contentOf } from "./workspace/file-id.js";
import { type FileChange } from "./workspace/trees.js";
import { readBlobs } from "./workspace/packs.js";
import { BoundedPatch } from "./workspace/patch.js";
import { LINK_REASON } from "./workspace/walk.js";
import { scan, stateOf } from "./workspace/state.js";
import { checkpointFiles, sameConfig, snapshotChanges, workspaceOf } from "./workspace/snapshots.js";

/** Changes whose contents are read at a time for the patch: memory holds one batch's contents, not the whole diff's. */
const PATCH_BATCH = 64;

export async function diffFiles(
  ctx: EngineContext,
  ref: SessionRef,
  checkpointInput: unknown,
  targetInput: unknown,
  optionsInput: unknown = {},
): Promise<FilesDiff> {
  const checkpointId = parseInput(idSchema, checkpointInput, "checkpointId");
  const target = parseInput(idSchema, targetInput, "target");
  const o = parseOptions(diffFilesOptions, optionsInput ?? {}, "options");
  const { ws, from, to } = await ctx.store.read((tx) => diffFilesUnit(tx, ref, checkpointId, ctx, target));
  let changes: FileChange[];
  let skipped: SkippedFile[] = [];
  if (to === null) {
    // The directory now, through the stat cache: only files whose stat data changed are read.
    const state = await stateOf(ctx, ws);
    changes = await state.exclusive(async () => {
      await scan(ctx, state);
      skipped = state.cache.skippedFiles();
      return ctx.store.read((tx) => snapshotChanges(tx, from, state.cache.root));
    });
    // A path that cannot be stored is there, whatever the snapshot lacks: it is said in `skipped`, not as deleted. A
    // link is no file forkpoint wrote: a captured path that is now one is a change (a restore refuses to write there).
    const unstorable = skipped.filter((f) => f.reason !== LINK_REASON).map((f) => f.path);
    const left = (path: string) => unstorable.some((p) => path === p || path.startsWith(`${p}/`));
    if (unstorable.length > 0) changes = changes.filter((c) => !left(c.path));
  } else changes = await ctx.store.read((tx) => snapshotChanges(tx, from, to));
  const lists = {
    added: changes.filter((c) => c.from === null).map((c) => c.path),
    modified: changes.filter((c) => c.from !== null && c.to !== null).map((c) => c.path),
    deleted: changes.filter((c) => c.to === null).map((c) => c.path),
  };
  const also = skipped.length > 0 ? { skipped } : {};
  if (o.patch === false) return { ...lists, patch: "", ...also };
  const patch = await patchOf(ctx, changes, to === null ? ws.dir : null, o.maxPatchChars);
  return { ...lists, patch: patch.text, ...(patch.truncated ? { patchTruncated: true as const } : {}), ...also };
}

/** The patch of `changes`, a batch of contents at a time; `dir`: the target side is the files there (the disk). */
async function patchOf(ctx: EngineContext, changes: FileChange[], dir: string | null, maxChars: number | undefined): Promise<BoundedPatch> {
  const patch = new BoundedPatch(maxChars);
  const none = Buffer.alloc(0);
  for (let i = 0; i < changes.length; i += PATCH_BATCH) {
    const batch = changes.slice(i, i + PATCH_BATCH);
    const stored = batch.flatMap((c) => [c.from, ...(dir === null ? [c.to] : [])]).flatMap((id) => (id === null ? [] : [contentOf(id)]));
    const contents = await ctx.store.read((tx) => readBlobs(tx, stored));
    for (const c of batch) {
      const before = c.from === null ? none : contents.get(contentOf(c.from))!;
      const after = c.to === null ? none : dir === null ? contents.get(contentOf(c.to))! : readFileSync(`${dir}/${c.path}`);
      if (!patch.add(c, before, after)) return patch;
    }
  }
  return patch;
}

function* diffFilesUnit(tx: Tx, ref: SessionRef, checkpointId: string, ctx: EngineContext, target: string) {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  const ws = yield* workspaceOf(tx, session.id, "diffFiles", target === "disk");
  const fromRow = yield* checkpointFiles(tx, (yield* sessionCheckpoint(tx, session, checkpointId, ctx.now())).id, "checkpointId");
  const from = (target === "disk" ? sameConfig(fromRow, ws, "checkpointId", `checkpoint ${checkpointId}`) : fromRow).manifestId;
  const to =
    target === "disk"
      ? null
      : (yield* checkpointFiles(tx, (yield* sessionCheckpoint(tx, session, target, ctx.now())).id, "target")).manifestId;
  return { ws, from, to };
}
