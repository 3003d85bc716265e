// deleteSession: a session and everything it recorded, gone in one transaction (a user's "delete this chat").
import type { Tx } from "../store/port/index.js";
import { ConflictError } from "../models/errors.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession } from "./core/owned.js";

export async function deleteSession(ctx: EngineContext, ref: SessionRef): Promise<void> {
  await deleteSessions(ctx, [ref]);
}

/**
 * Several sessions (a LangGraph thread's namespaces) in one transaction: all go, or none if one cannot. With
 * `gone: "skip"`, one already deleted (by a concurrent call) is passed over instead of being a `NotFoundError`.
 */
export async function deleteSessions(ctx: EngineContext, refs: SessionRef[], gone: "throw" | "skip" = "throw"): Promise<void> {
  // Exclusive: no tool call or move of this process is running on any of them while they go. Taken in id order.
  const sorted = [...refs].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const locked = (i: number): Promise<void> =>
    i < sorted.length
      ? ctx.withSessionLock(sorted[i]!.id, () => locked(i + 1))
      : ctx.store.write({ sessionIds: sorted.map((r) => r.id) }, (tx) => lockedUnit(tx, sorted, gone));
  await locked(0);
}

function* lockedUnit(tx: Tx, sorted: SessionRef[], gone: "throw" | "skip") {
  for (const ref of sorted) {
    if (gone === "skip" && (yield* tx.getSession(ref.id)) === undefined) continue;
    yield* ownedSession(tx, ref.id, ref.userId);
    // Another process's move (or an interrupted one) still has steps to record against it.
    if ((yield* tx.runningMoves(ref.id)).length > 0 || (yield* tx.getWorkspace(ref.id))?.restoring) {
      throw new ConflictError(`session ${ref.id} has a move in progress; let it finish (or run fp.recover()) first`, "MOVE_IN_PROGRESS");
    }
    yield* tx.deleteSession(ref.id);
  }
}
