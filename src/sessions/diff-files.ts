// diffFiles: what changed in the workspace's files between a checkpoint and another, or the disk.
import { readFileSync } from "node:fs";
import type { Tx } from "../store/port/index.js";
import { idSchema, parseInput } from "../models/inputs.js";
import type { FilesDiff } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession, sessionCheckpoint } from "./core/owned.js";
import { contentOf } from "./workspace/file-id.js";
import { filesPatch } from "./workspace/patch.js";
import { readBlobs, type FileChange } from "./workspace/objects.js";
import { scan, stateOf } from "./workspace/state.js";
import { checkpointFiles, sameConfig, snapshotChanges, workspaceOf } from "./workspace/snapshots.js";

export async function diffFiles(ctx: EngineContext, ref: SessionRef, checkpointInput: unknown, targetInput: unknown): Promise<FilesDiff> {
  const checkpointId = parseInput(idSchema, checkpointInput, "checkpointId");
  const target = parseInput(idSchema, targetInput, "target");
  const { ws, from, to } = await ctx.store.read((tx) => diffFilesUnit(tx, ref, checkpointId, ctx, target));
  let changes: FileChange[];
  const onDisk = new Map<string, string>();
  if (to === null) {
    // The directory now, through the stat cache: only files whose stat data changed are read.
    const state = await stateOf(ctx, ws);
    changes = await state.exclusive(async () => {
      await scan(ctx, state);
      return ctx.store.read((tx) => snapshotChanges(tx, from, state.cache.root));
    });
    for (const c of changes) if (c.to !== null) onDisk.set(contentOf(c.to), c.path);
  } else changes = await ctx.store.read((tx) => snapshotChanges(tx, from, to));
  const needed = changes
    .flatMap((c) => [c.from, c.to])
    .flatMap((id) => (id === null ? [] : [contentOf(id)]))
    .filter((h) => !onDisk.has(h));
  const stored = await ctx.store.read((tx) => readBlobs(tx, needed));
  const patch = filesPatch(changes, (hash) => stored.get(hash) ?? readFileSync(`${ws.dir}/${onDisk.get(hash)!}`));
  return {
    added: changes.filter((c) => c.from === null).map((c) => c.path),
    modified: changes.filter((c) => c.from !== null && c.to !== null).map((c) => c.path),
    deleted: changes.filter((c) => c.to === null).map((c) => c.path),
    patch,
  };
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
