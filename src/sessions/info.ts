// info: the session's id, owner, title, metadata, current branch and times.
import type { SessionInfo } from "../models/types.js";
import type { Tx } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession } from "./core/owned.js";
import { toSessionInfo } from "./core/rows.js";

export function info(ctx: EngineContext, ref: SessionRef): Promise<SessionInfo> {
  return ctx.store.read((tx) => infoUnit(tx, ref));
}

function* infoUnit(tx: Tx, ref: SessionRef) {
  yield* ownedSession(tx, ref.id, ref.userId);
  return toSessionInfo((yield* tx.getSessionInfo(ref.id))!);
}
