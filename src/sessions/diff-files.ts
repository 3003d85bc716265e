// diffFiles: what changed in the workspace's files between a checkpoint and another, or the disk.
import type { Tx } from "../store/port/index.js";
import { idSchema, parseInput } from "../models/inputs.js";
import type { FilesDiff } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession, sessionCheckpoint } from "./core/owned.js";
import { changedPaths, filesPatch, manifestOf } from "./workspace/files.js";
import { blobsOf, checkpointFiles, manifestFiles, sameConfig, takeSnapshot, workspaceOf } from "./workspace/workspace.js";

export async function diffFiles(ctx: EngineContext, ref: SessionRef, checkpointInput: unknown, targetInput: unknown): Promise<FilesDiff> {
  const checkpointId = parseInput(idSchema, checkpointInput, "checkpointId");
  const target = parseInput(idSchema, targetInput, "target");
  const { ws, from, to } = await ctx.store.read((tx) => diffFilesUnit(tx, ref, checkpointId, ctx, target));
  const disk = to === null ? takeSnapshot(ctx, ws).files : null;
  const toFiles = to ?? manifestOf(disk!).files;
  const diskContent = new Map([...(disk?.values() ?? [])].map((f) => [f.hash, f.content]));
  const paths = changedPaths(from, toFiles);
  const needed = paths.flatMap((p) => [from[p], toFiles[p]]).filter((h): h is string => h !== undefined && !diskContent.has(h));
  const stored = await ctx.store.read((tx) => blobsOf(tx, needed));
  const patch = filesPatch(from, toFiles, (hash) => diskContent.get(hash) ?? stored.get(hash)!);
  return {
    added: paths.filter((p) => from[p] === undefined),
    modified: paths.filter((p) => from[p] !== undefined && toFiles[p] !== undefined),
    deleted: paths.filter((p) => toFiles[p] === undefined),
    patch,
  };
}

function* diffFilesUnit(tx: Tx, ref: SessionRef, checkpointId: string, ctx: EngineContext, target: string) {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  const ws = yield* workspaceOf(tx, session.id, "diffFiles", target === "disk");
  const fromRow = yield* checkpointFiles(tx, (yield* sessionCheckpoint(tx, session, checkpointId, ctx.now())).id, "checkpointId");
  const from = yield* manifestFiles(
    tx,
    (target === "disk" ? sameConfig(fromRow, ws, "checkpointId", `checkpoint ${checkpointId}`) : fromRow).manifestId,
  );
  const to =
    target === "disk"
      ? null
      : yield* manifestFiles(
          tx,
          (yield* checkpointFiles(tx, (yield* sessionCheckpoint(tx, session, target, ctx.now())).id, "target")).manifestId,
        );
  return { ws, from, to };
}
