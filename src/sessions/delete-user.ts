// deleteUser: every session of one user and everything they recorded, gone a bounded batch at a time (an operator call).
import { z } from "zod";
import { ConflictError } from "../models/errors.js";
import { idSchema, parseInput, parseOptions } from "../models/inputs.js";
import { longCallFields, type LongCallOptions } from "../models/progress.js";
import type { EngineContext } from "./core/context.js";
import { deleteSessions } from "./delete-session.js";
import { LongCall } from "./maintenance/long-call.js";

/** Sessions deleted per transaction: a user with thousands of sessions never holds the database in one. */
export const DELETE_USER_BATCH = 16;

/** Options of `deleteUser`: a signal and a progress callback (units: the user's sessions). */
export type DeleteUserOptions = LongCallOptions;

/** What `deleteUser` did. */
export interface DeleteUserReport {
  /** Sessions this call deleted (0 when the user had none: an unknown user is no error, so a rerun is safe). */
  sessions: number;
}

const deleteUserOptions = z.strictObject({ ...longCallFields });

/**
 * Walks the user's sessions newest first, as they were when the call started, deleting each batch in one write
 * transaction (what `deleteSession` deletes, for each). A batch commits before the next starts, so an interrupted call
 * (an abort, a crash, a lost connection) leaves whole sessions deleted and whole sessions kept, and calling it again
 * deletes the rest. A session with a move in progress is kept while the others go; the call then rejects with
 * `ConflictError` `MOVE_IN_PROGRESS` naming it.
 */
export async function deleteUser(ctx: EngineContext, userId: string, options: DeleteUserOptions = {}): Promise<DeleteUserReport> {
  const id = parseInput(idSchema, userId, "userId");
  const o = parseOptions(deleteUserOptions, options, "options");
  const call = new LongCall(o);
  call.start(await ctx.store.query((tx) => tx.countUserSessions(id)));
  const kept: string[] = [];
  let deleted = 0;
  let before: number | undefined;
  for (;;) {
    const batch = await ctx.store.query((tx) => tx.userSessionIds(id, before, DELETE_USER_BATCH));
    if (batch.length === 0) break;
    // Gone already (a concurrent deleteSession, or this same call run twice at once) is fine: passed over.
    const done = await deleteSessions(
      ctx,
      batch.map((s) => ({ id: s.id, userId: id })),
      "skip",
      "keep",
    );
    deleted += done.deleted;
    kept.push(...done.kept);
    call.advance(batch.length);
    if (batch.length < DELETE_USER_BATCH) break;
    before = batch[batch.length - 1]!.seq;
    await call.pause();
  }
  if (kept.length > 0) {
    const named = kept.slice(0, 10).join(", ") + (kept.length > 10 ? ", …" : "");
    throw new ConflictError(
      `${kept.length} of the user's sessions had a move in progress and ${kept.length === 1 ? "was" : "were"} kept (${named}); ` +
        "the others are deleted. Let the moves finish (or run fp.recover()), then call deleteUser again",
      "MOVE_IN_PROGRESS",
    );
  }
  call.finish();
  return { sessions: deleted };
}
