// update: a session's title and metadata (metadata is replaced whole; null clears either).
import type { Step, Tx } from "../store/port/index.js";
import { parseOptions, updateSessionInput, type UpdateSessionInput } from "../models/inputs.js";
import { toJsonText } from "../models/json.js";
import type { SessionInfo } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession } from "./core/owned.js";
import { toSessionInfo } from "./core/rows.js";

export async function update(ctx: EngineContext, ref: SessionRef, input: UpdateSessionInput): Promise<SessionInfo> {
  const o = parseOptions(updateSessionInput, input, "fields");
  const metadata = o.metadata === undefined || o.metadata === null ? o.metadata : toJsonText(o.metadata, "metadata", ctx.limits);
  return ctx.store.write({ sessionId: ref.id }, (tx) => updateUnit(ctx, tx, ref, { title: o.title, metadata }));
}

/** `fields` as the store takes them: undefined leaves a field, null clears it; metadata is JSON text. */
function* updateUnit(
  ctx: EngineContext,
  tx: Tx,
  ref: SessionRef,
  fields: { title: string | null | undefined; metadata: string | null | undefined },
): Step<SessionInfo> {
  const row = yield* ownedSession(tx, ref.id, ref.userId);
  // Nothing to change (no field given, or each as it is) writes nothing: `updatedAt` stays.
  const changes = (["title", "metadata"] as const).some((k) => fields[k] !== undefined && fields[k] !== row[k]);
  if (changes) yield* tx.updateSession(ref.id, fields, ctx.now());
  return toSessionInfo((yield* tx.getSessionInfo(ref.id))!);
}
