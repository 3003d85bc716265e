// restore: a checkpoint's state, history and tool track, read with its checksum and hash chain verified.
import type { Tx } from "../store/port/index.js";
import type { RestoredCheckpoint } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession, sessionCheckpoint } from "./core/owned.js";
import { toCheckpoint, toMessage, toToolInvocation } from "./core/rows.js";
import { readVerified } from "./log/verified-read.js";
import { readState } from "./log/snapshots.js";

export async function restore(ctx: EngineContext, ref: SessionRef, checkpointId: string): Promise<RestoredCheckpoint> {
  return ctx.store.read((tx) => restoreUnit(tx, ref, checkpointId, ctx));
}

function* restoreUnit(tx: Tx, ref: SessionRef, checkpointId: string, ctx: EngineContext) {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  const cp = yield* sessionCheckpoint(tx, session, checkpointId, ctx.now());
  const { entries, tools } = yield* readVerified(tx, cp);
  return {
    checkpoint: toCheckpoint(cp),
    state: yield* readState(ctx, tx, cp.stateId),
    history: entries.filter((e) => e.kind === "message").map(toMessage),
    toolTrack: tools.map(toToolInvocation),
  };
}
