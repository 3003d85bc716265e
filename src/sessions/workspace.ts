// Workspaces: a directory attached to a session. Checkpoints capture its files (content-addressed, stored once);
// diffFiles compares them; moves with scope "files" or "both" make the directory match the target again. Files changed
// outside forkpoint since it last saw them (drift) are never overwritten: the move is refused with a ConflictError.
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { createHash } from "node:crypto";
import { ConflictError, IntegrityError, ValidationError } from "../models/errors.js";
import { attachWorkspaceInput, idSchema, parseInput } from "../models/inputs.js";
import type { FilesDiff, WorkspaceInfo } from "../models/types.js";
import type { Store, WorkspaceRow } from "../store/store.js";
import type { EngineContext, SessionRef } from "./context.js";
import { ownedSession, sessionCheckpoint } from "./ownership.js";
import { changedPaths, filesPatch, manifestOf, restoreWorkspace, scanWorkspace, type Snapshot } from "./workspace-files.js";

/** A snapshot read from disk for a workspace, with the configuration it was read under. */
export interface TakenSnapshot {
  dir: string;
  exclude: string;
  files: Snapshot;
}

/** Reads the workspace's files now (outside any transaction: it is file-system work). */
export function takeSnapshot(ctx: EngineContext, ws: Pick<WorkspaceRow, "dir" | "exclude">): TakenSnapshot {
  const exclude = JSON.parse(ws.exclude) as string[];
  const files = scanWorkspace(ws.dir, exclude, new Set(ctx.store.databaseFiles()), ctx.limits.maxPayloadBytes);
  return { dir: ws.dir, exclude: ws.exclude, files };
}

/** Stores a snapshot's contents and manifest (each once); returns the manifest id. Inside a write unit. */
export function saveSnapshot(store: Store, snapshot: Snapshot): number {
  const manifest = manifestOf(snapshot);
  const known = store.manifestId(manifest.hash);
  if (known !== undefined) return known;
  for (const file of snapshot.values()) store.insertBlob(file.hash, file.content);
  return store.insertManifest(manifest.hash, manifest.body);
}

function manifestFiles(store: Store, manifestId: number): Record<string, string> {
  return JSON.parse(store.getManifest(manifestId)!.body) as Record<string, string>;
}

/** A stored file content, checked against its address: a damaged blob is never written to the workspace. */
const blobOf = (store: Store) => (hash: string): Buffer => {
  const content = store.getBlob(hash);
  if (!content || createHash("sha256").update(content).digest("hex") !== hash) {
    throw new IntegrityError(`stored file content ${hash} is missing or does not match its hash`);
  }
  return content;
};

/** Problems with the files a checkpoint captured (for `verify`): the manifest and every content against their hashes. */
export function checkpointFilesProblems(store: Store, checkpointId: string): string[] {
  const manifestId = store.checkpointManifest(checkpointId);
  if (manifestId === undefined) return [];
  const manifest = store.getManifest(manifestId);
  if (!manifest || manifestOf(JSON.parse(manifest.body) as Record<string, string>).hash !== manifest.hash) {
    return ["its file manifest is missing or does not match its hash"];
  }
  const problems: string[] = [];
  for (const [path, hash] of Object.entries(JSON.parse(manifest.body) as Record<string, string>)) {
    try {
      blobOf(store)(hash);
    } catch {
      problems.push(`its file ${path} is missing or does not match its hash`);
    }
  }
  return problems;
}

export async function attachWorkspace(ctx: EngineContext, ref: SessionRef, dirInput: unknown, options: unknown = {}): Promise<WorkspaceInfo> {
  const dir = resolve(parseInput(idSchema, dirInput, "dir"));
  const o = parseInput(attachWorkspaceInput, options, "options");
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    // reported below
  }
  if (!isDir) throw new ValidationError("dir", `${dir} is not a directory`);
  const exclude = JSON.stringify(o.exclude ?? []);
  await ctx.store.read(() => ownedSession(ctx.store, ref.id, ref.userId));
  const taken = takeSnapshot(ctx, { dir, exclude });
  await ctx.store.write(() => {
    ownedSession(ctx.store, ref.id, ref.userId);
    ctx.store.putWorkspace({ sessionId: ref.id, dir, exclude, manifestId: saveSnapshot(ctx.store, taken.files), updatedAt: ctx.now() });
  });
  return { dir, exclude: o.exclude ?? [], files: taken.files.size };
}

/** The session's workspace, or a ValidationError naming what needs one. */
function workspaceOf(store: Store, sessionId: string, what: string): WorkspaceRow {
  const ws = store.getWorkspace(sessionId);
  if (!ws) throw new ValidationError(what, "the session has no workspace: call attachWorkspace(dir) first");
  return ws;
}

/** The files a checkpoint captured. */
function checkpointFiles(store: Store, checkpointId: string, field: string): number {
  const manifestId = store.checkpointManifest(checkpointId);
  if (manifestId === undefined) throw new ValidationError(field, `checkpoint ${checkpointId} holds no files (it was taken without a workspace)`);
  return manifestId;
}

export async function diffFiles(ctx: EngineContext, ref: SessionRef, checkpointInput: unknown, targetInput: unknown): Promise<FilesDiff> {
  const checkpointId = parseInput(idSchema, checkpointInput, "checkpointId");
  const target = parseInput(idSchema, targetInput, "target");
  const { ws, from, to } = await ctx.store.read(() => {
    const session = ownedSession(ctx.store, ref.id, ref.userId);
    const ws = workspaceOf(ctx.store, session.id, "diffFiles");
    const from = manifestFiles(ctx.store, checkpointFiles(ctx.store, sessionCheckpoint(ctx.store, session, checkpointId, ctx.now()).id, "checkpointId"));
    const to = target === "disk" ? null : manifestFiles(ctx.store, checkpointFiles(ctx.store, sessionCheckpoint(ctx.store, session, target, ctx.now()).id, "target"));
    return { ws, from, to };
  });
  let toFiles = to;
  let disk: Snapshot | null = null;
  if (toFiles === null) {
    disk = takeSnapshot(ctx, ws).files;
    toFiles = manifestOf(disk).files;
  }
  const content = (hash: string): Buffer => {
    for (const f of disk?.values() ?? []) if (f.hash === hash) return f.content;
    return ctx.store.getBlob(hash) ?? Buffer.alloc(0);
  };
  const paths = changedPaths(from, toFiles);
  return {
    added: paths.filter((p) => from[p] === undefined),
    modified: paths.filter((p) => from[p] !== undefined && toFiles[p] !== undefined),
    deleted: paths.filter((p) => toFiles[p] === undefined),
    patch: filesPatch(from, toFiles, content),
  };
}

/**
 * The files a move's target should have: the checkpoint's own when the move goes to one, else those of the newest
 * checkpoint with files on the target lineage at or before the target position.
 */
export function targetFiles(store: Store, target: { branchId: string; position: number }, checkpointId: string | null): number {
  if (checkpointId) {
    const own = store.checkpointManifest(checkpointId);
    if (own !== undefined) return own;
  }
  const segments = store.lineage(target.branchId, target.position);
  for (let i = segments.length - 1; i >= 0; i--) {
    const s = segments[i]!;
    const found = store.lastCheckpointFiles(s.branchId, s.after, s.upTo);
    if (found !== undefined) return found;
  }
  throw new ValidationError("options.scope", "no checkpoint on the target's lineage captured the workspace's files");
}

/** Refuses to touch files changed outside forkpoint since it last saw them (drift). Returns the fresh scan. */
export function checkNoDrift(ctx: EngineContext, ws: WorkspaceRow): Snapshot {
  const disk = takeSnapshot(ctx, ws).files;
  const drifted = changedPaths(manifestFiles(ctx.store, ws.manifestId), manifestOf(disk).files);
  if (drifted.length > 0) {
    const shown = drifted.slice(0, 10).join(", ") + (drifted.length > 10 ? `, and ${drifted.length - 10} more` : "");
    throw new ConflictError(
      `the workspace ${ws.dir} changed outside forkpoint since its last checkpoint (${shown}); take a checkpoint to keep those changes, then move`,
      "WORKSPACE_DRIFT",
    );
  }
  return disk;
}

/** Makes the workspace hold the target manifest's files and records it as what forkpoint last wrote. */
export async function restoreFiles(ctx: EngineContext, sessionId: string, manifestId: number): Promise<{ written: string[]; deleted: string[] }> {
  const { ws, files } = await ctx.store.read(() => {
    const ws = ctx.store.getWorkspace(sessionId)!;
    return { ws, files: manifestFiles(ctx.store, manifestId) };
  });
  const current = takeSnapshot(ctx, ws).files;
  // Every content to write is read and checked first: a damaged one stops the restore before any file changes.
  const contents = await ctx.store.read(() => {
    const blob = blobOf(ctx.store);
    const needed = new Map<string, Buffer>();
    for (const [path, hash] of Object.entries(files)) if (current.get(path)?.hash !== hash && !needed.has(hash)) needed.set(hash, blob(hash));
    return needed;
  });
  const changed = restoreWorkspace(ws.dir, current, files, (hash) => contents.get(hash)!);
  await ctx.store.write(() => ctx.store.setWorkspaceManifest(sessionId, manifestId, ctx.now()));
  return changed;
}

/** After a tool call: whatever it did to the files is known to forkpoint (not drift). */
export async function noteWorkspace(ctx: EngineContext, sessionId: string): Promise<void> {
  const ws = await ctx.store.read(() => ctx.store.getWorkspace(sessionId));
  if (!ws) return;
  const taken = takeSnapshot(ctx, ws);
  await ctx.store.write(() => ctx.store.setWorkspaceManifest(sessionId, saveSnapshot(ctx.store, taken.files), ctx.now()));
}

export { workspaceOf };
