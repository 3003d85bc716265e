// attachWorkspace: a directory whose files checkpoints capture and moves restore.
import type { Tx } from "../store/port/index.js";
import { THIS_HOST } from "./workspace/host.js";
import { resolve } from "node:path";
import { ValidationError } from "../models/errors.js";
import { attachWorkspaceInput, directoryPath, parseInput, parseOptions } from "../models/inputs.js";
import type { WorkspaceInfo } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession } from "./core/owned.js";
import { assertNoRestorePending, realDir, saveSnapshot, takeSnapshot, type TakenSnapshot } from "./workspace/workspace.js";

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
  const exclude = JSON.stringify(o.exclude ?? []);
  const pending = await ctx.store.read((tx) => pendingRestoreUnit(tx, ref));
  if (pending) assertNoRestorePending(pending);
  const taken = takeSnapshot(ctx, { dir, exclude });
  await ctx.store.write({ sessionId: ref.id }, (tx) => attachWorkspaceUnit(tx, ref, dir, exclude, taken, ctx));
  return { dir, exclude: o.exclude ?? [], files: taken.files.size };
}

function* attachWorkspaceUnit(tx: Tx, ref: SessionRef, dir: string, exclude: string, taken: TakenSnapshot, ctx: EngineContext) {
  yield* ownedSession(tx, ref.id, ref.userId);
  const ws = yield* tx.getWorkspace(ref.id);
  if (ws) assertNoRestorePending(ws);
  yield* tx.putWorkspace({
    sessionId: ref.id,
    dir,
    exclude,
    manifestId: yield* saveSnapshot(tx, taken.files),
    updatedAt: ctx.now(),
    host: THIS_HOST,
  });
}

function* pendingRestoreUnit(tx: Tx, ref: SessionRef) {
  yield* ownedSession(tx, ref.id, ref.userId);
  return yield* tx.getWorkspace(ref.id);
}
