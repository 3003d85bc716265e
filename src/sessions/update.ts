// update: a session's title and metadata (metadata is replaced whole; null clears either).
import { parseOptions, updateSessionInput, type UpdateSessionInput } from "../models/inputs.js";
import { toJsonText } from "../models/json.js";
import type { SessionInfo } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession } from "./core/owned.js";
import { toSessionInfo } from "./core/rows.js";

export async function update(ctx: EngineContext, ref: SessionRef, input: UpdateSessionInput): Promise<SessionInfo> {
  const o = parseOptions(updateSessionInput, input, "fields");
  const metadata = o.metadata === undefined || o.metadata === null ? o.metadata : toJsonText(o.metadata, "metadata", ctx.limits);
  return ctx.store.write({ sessionId: ref.id }, function* (tx) {
    yield* ownedSession(tx, ref.id, ref.userId);
    yield* tx.updateSession(ref.id, { title: o.title, metadata }, ctx.now());
    return toSessionInfo((yield* tx.getSessionInfo(ref.id))!);
  });
}
