// deleteSession: a session and everything it recorded, gone in one transaction (a user's "delete this chat").
import type { Tx } from "../store/port/index.js";
import { ConflictError } from "../models/errors.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession } from "./core/owned.js";

export async function deleteSession(ctx: EngineContext, ref: SessionRef): Promise<void> {
  await deleteSessions(ctx, [ref]);
}

/**
 * Several sessions (a LangGraph thread's namespaces, a batch of a user's) in one transaction: all go, or none if one
 * cannot. With `gone: "skip"`, one already deleted (by a concurrent call) is passed over instead of being a
 * `NotFoundError`; with `busy: "keep"`, one with a move in progress is kept (and its id returned) instead of refusing
 * them all.
 */
export async function deleteSessions(
  ctx: EngineContext,
  refs: SessionRef[],
  gone: "throw" | "skip" = "throw",
  busy: "throw" | "keep" = "throw",
): Promise<{ deleted: number; kept: string[] }> {
  // Exclusive: no tool call or move of this process is running on any of them while they go. Taken in id order.
  const sorted = [...refs].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const locked = (i: number): Promise<{ deleted: number; kept: string[] }> =>
    i < sorted.length
      ? ctx.withSessionLock(sorted[i]!.id, () => locked(i + 1))
      : ctx.store.write({ sessionIds: sorted.map((r) => r.id) }, (tx) => lockedUnit(tx, sorted, gone, busy));
  return locked(0);
}

function* lockedUnit(tx: Tx, sorted: SessionRef[], gone: "throw" | "skip", busy: "throw" | "keep") {
  const kept: string[] = [];
  let deleted = 0;
  for (const ref of sorted) {
    if (gone === "skip" && (yield* tx.getSession(ref.id)) === undefined) continue;
    yield* ownedSession(tx, ref.id, ref.userId);
    // Another process's move (or an interrupted one) still has steps to record against it.
    if ((yield* tx.runningMoves(ref.id)).length > 0 || (yield* tx.getWorkspace(ref.id))?.restoring) {
      if (busy === "keep") {
        kept.push(ref.id);
        continue;
      }
      throw new ConflictError(`session ${ref.id} has a move in progress; let it finish (or run fp.recover()) first`, "MOVE_IN_PROGRESS");
    }
    yield* tx.deleteSession(ref.id);
    deleted++;
  }
  return { deleted, kept };
}
