// update: a session's title and metadata (metadata is replaced whole; null clears either).
import type { Step, Tx } from "../store/port/index.js";
import { parseOptions, updateSessionInput, type UpdateSessionInput, type WriteOptions } from "../models/inputs.js";
import { toJsonText } from "../models/json.js";
import type { SessionInfo } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { checkIfAt, type IfAt } from "./core/if-at.js";
import { ownedSession } from "./core/owned.js";
import { toSessionInfo } from "./core/rows.js";
import { applyOnce, recordRequest, requestOf, writeControlOf, type AnswerCodec, type Request } from "./requests/ledger.js";

/** The session's info as the first call returned it, kept whole (the session's title and metadata change later). */
const infoAnswer: AnswerCodec<SessionInfo> = {
  encode: (info) => JSON.stringify(info),
  *decode(_tx, answer) {
    const info = JSON.parse(answer) as SessionInfo & { createdAt: string; updatedAt: string };
    return { ...info, createdAt: new Date(info.createdAt), updatedAt: new Date(info.updatedAt) };
  },
};

export async function update(ctx: EngineContext, ref: SessionRef, input: UpdateSessionInput, options?: WriteOptions): Promise<SessionInfo> {
  const o = parseOptions(updateSessionInput, input, "fields");
  const metadata = o.metadata === undefined || o.metadata === null ? o.metadata : toJsonText(o.metadata, "metadata", ctx.limits);
  const { requestId, ifAt } = writeControlOf(options);
  const fields = { title: o.title, metadata };
  // A field left out is [], one given is [value] (null clears it): the three differ.
  const given = (v: unknown) => (v === undefined ? [] : [v]);
  const request = requestOf(requestId, "update", { title: given(o.title), metadata: given(o.metadata) }, infoAnswer);
  return applyOnce(ctx, ref, request, () =>
    ctx.store.write({ sessionId: ref.id }, (tx) => updateUnit(ctx, tx, ref, fields, request, ifAt)),
  );
}

/** `fields` as the store takes them: undefined leaves a field, null clears it; metadata is JSON text. */
function* updateUnit(
  ctx: EngineContext,
  tx: Tx,
  ref: SessionRef,
  fields: { title: string | null | undefined; metadata: string | null | undefined },
  request: Request<SessionInfo> | undefined,
  ifAt: IfAt | undefined,
): Step<SessionInfo> {
  const row = yield* ownedSession(tx, ref.id, ref.userId);
  yield* checkIfAt(tx, row, ifAt);
  // Nothing to change (no field given, or each as it is) writes nothing: `updatedAt` stays.
  const changes = (["title", "metadata"] as const).some((k) => fields[k] !== undefined && fields[k] !== row[k]);
  if (changes) yield* tx.updateSession(ref.id, fields, ctx.now());
  const info = toSessionInfo((yield* tx.getSessionInfo(ref.id))!);
  yield* recordRequest(ctx, tx, ref.id, request, info, true);
  return info;
}
