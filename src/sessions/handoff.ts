// handoff: seed a new session (another agent or user) from a checkpoint, keeping a link to its origin.
// It copies the checkpoint's history and state, not its tool calls: nothing is applied in the new session.
import type { Tx } from "../store/port/index.js";
import { readVerified } from "./log/verified-read.js";
import type { CreateSessionInput } from "../models/inputs.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession, sessionCheckpoint } from "./core/owned.js";
import { newSessionFields, writeNewSession } from "./create-session.js";
import { headOfEntry } from "./core/head.js";
import { stateHashOf, writeEntry } from "./log/writer.js";
import { remapEntryRefsText } from "./entry-refs.js";

export async function handoff(ctx: EngineContext, ref: SessionRef, checkpointId: string, target: CreateSessionInput): Promise<SessionRef> {
  const fields = newSessionFields(ctx, target, "target");
  const created = await ctx.store.write({ sessionId: ref.id }, (tx) => handoffUnit(tx, ctx, ref, checkpointId, fields));
  ctx.events.emit("handoff", { from: { sessionId: ref.id, checkpointId }, to: created });
  return created;
}

function* handoffUnit(
  tx: Tx,
  ctx: EngineContext,
  ref: SessionRef,
  checkpointId: string,
  fields: { userId: string; title: string | null; metadata: string | null },
) {
  const source = yield* ownedSession(tx, ref.id, ref.userId);
  const cp = yield* sessionCheckpoint(tx, source, checkpointId, ctx.now());
  const { entries } = yield* readVerified(tx, cp);
  const { id, branchId } = yield* writeNewSession(ctx, tx, { ...fields, origin: { sessionId: source.id, checkpointId: cp.id } });
  let head = headOfEntry(undefined);
  // Each message's copy, by the original's id: metadata naming an entry (a later form of an answer names the one
  // before it) names the copy's.
  const copies = new Map<string, string>();
  for (const e of entries) {
    if (e.kind !== "message") continue;
    const copy = yield* writeEntry(ctx, tx, branchId, head, {
      kind: "message",
      role: e.role,
      content: e.content,
      clientId: e.clientId,
      metadata: remapEntryRefsText(e.metadata, (old) => copies.get(old)),
    });
    copies.set(e.id, copy.id);
    head = headOfEntry(copy);
  }
  // The state document is content-addressed: the new session points at the same snapshot.
  if (cp.stateId !== null)
    yield* writeEntry(ctx, tx, branchId, head, { kind: "state", state: { id: cp.stateId, hash: yield* stateHashOf(tx, cp.stateId) } });
  yield* tx.insertEvent({
    sessionId: source.id,
    kind: "handoff",
    refId: id,
    branchId: cp.branchId,
    detail: `checkpoint ${cp.id} handed off to session ${id}`,
    createdAt: ctx.now(),
  });
  return { id, userId: fields.userId };
}
