// prune: an operator call that drops what no read can reach any more (expired checkpoints no branch forks from,
// state documents nothing points at, the journals of finished moves) and gives the space back (VACUUM).
import { z } from "zod";
import { DatabaseError, NotFoundError } from "../models/errors.js";
import { idSchema, parseInput } from "../models/inputs.js";
import type { EngineContext } from "./context.js";

/** What `prune` removed, and the database size before and after. */
export interface PruneReport {
  /** Expired checkpoints deleted (those a branch forks from are kept: they stay invisible). */
  checkpoints: number;
  /** State documents no entry or checkpoint points at any more. */
  snapshots: number;
  /** Journals of finished moves (a move with a step of unknown outcome keeps its journal). */
  moves: number;
  /** Workspace file snapshots and contents no checkpoint or workspace holds any more. */
  files: number;
  /**
   * Whether the file was rebuilt. False when `vacuum: false`, or when another connection kept the database busy
   * past the busy timeout (the deletions above are committed either way; prune again later to reclaim the space).
   */
  vacuumed: boolean;
  /** Bytes of the database (file and WAL) before and after. */
  bytesBefore: number;
  bytesAfter: number;
}

const pruneInput = z.strictObject({
  /** Only this session's expired checkpoints and move journals (state documents are shared: always the whole database). */
  sessionId: idSchema.optional(),
  /** Rebuild the file to release free pages (default true). */
  vacuum: z.boolean().optional(),
});

export async function prune(ctx: EngineContext, input: z.input<typeof pruneInput> = {}): Promise<PruneReport> {
  const o = parseInput(pruneInput, input, "prune");
  const bytesBefore = await ctx.store.query(() => ctx.store.sizeBytes());
  const removed = await ctx.store.write(() => {
    const store = ctx.store;
    if (o.sessionId !== undefined && !store.getSession(o.sessionId)) throw new NotFoundError("session", o.sessionId);
    const checkpoints = store.deleteExpiredCheckpoints(ctx.now(), o.sessionId);
    return {
      checkpoints: checkpoints.length,
      snapshots: store.deleteUnreferencedSnapshots(),
      moves: store.deleteFinishedMoves(o.sessionId),
      files: store.deleteUnreferencedFiles(),
    };
  });
  let vacuumed = false;
  if (o.vacuum ?? true) {
    try {
      // VACUUM rewrites the whole file: other connections' writes wait for it (or it waits for them).
      await ctx.store.query(() => ctx.store.vacuum());
      vacuumed = true;
    } catch (error) {
      if (!(error instanceof DatabaseError && error.code === "BUSY")) throw error;
    }
  }
  const report: PruneReport = { ...removed, vacuumed, bytesBefore, bytesAfter: await ctx.store.query(() => ctx.store.sizeBytes()) };
  ctx.events.emit("prune", report);
  return report;
}
