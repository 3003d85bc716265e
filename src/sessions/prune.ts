// prune: an operator call that drops what no read can reach any more (expired checkpoints no branch forks from,
// state documents nothing points at, the journals of finished moves) and gives the space back (VACUUM). It takes a
// signal and reports progress (see `LongCall`).
import { z } from "zod";
import { DatabaseError, NotFoundError } from "../models/errors.js";
import { idSchema, parseOptions } from "../models/inputs.js";
import { longCallFields, type LongCallOptions } from "../models/progress.js";
import type { Step, Tx, WriteScope } from "../store/port/index.js";
import type { EngineContext } from "./core/context.js";
import { LongCall } from "./maintenance/long-call.js";
import { retainAll } from "./log/retention.js";

/** What `prune` removed, and the database size before and after. */
export interface PruneReport {
  /**
   * Expired checkpoints deleted, those sessions' retention policies expire now included (those a branch forks from
   * are kept: they stay invisible).
   */
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
  ...longCallFields,
});

/** Options of `prune`: one session (default: all), whether to vacuum, and the long-call options. */
export type PruneOptions = { sessionId?: string; vacuum?: boolean } & LongCallOptions;

/**
 * Progress is counted in steps, each one write transaction (a single bulk statement each, the fastest way SQLite
 * deletes): expired checkpoints, finished move journals, unreferenced state documents, unreferenced workspace files,
 * then the vacuum when asked for. Between steps the call yields and checks its signal: an abort rejects with
 * `AbortedError`, and the steps already committed stay (each leaves the database consistent: it only drops what no
 * read reaches); the vacuum, once started, runs to its end.
 */
export async function prune(ctx: EngineContext, input: PruneOptions = {}): Promise<PruneReport> {
  const o = parseOptions(pruneInput, input, "options");
  const call = new LongCall(o);
  const vacuum = o.vacuum ?? true;
  const store = ctx.store;
  // An unknown session is refused before any progress, as verify refuses it; checked again where it is pruned.
  const sessionId = o.sessionId;
  if (sessionId !== undefined) await store.read((tx) => knownSession(tx, sessionId));
  const bytesBefore = await store.sizeBytes();
  const removed: Removed = { checkpoints: 0, snapshots: 0, moves: 0, files: 0 };
  const steps: ((tx: Tx) => Step<void>)[] = [
    (tx) => dropExpiredCheckpoints(ctx, tx, sessionId, removed),
    (tx) => dropFinishedMoves(tx, sessionId, removed),
    (tx) => dropUnreferencedSnapshots(tx, removed),
    (tx) => dropUnreferencedFiles(tx, removed),
  ];
  // The first step touches one session when given one; the others drop what no session reaches, across sessions.
  const scopes: WriteScope[] = steps.map((_, i) => (i === 0 && o.sessionId !== undefined ? { sessionId: o.sessionId } : { global: true }));
  call.start(steps.length + (vacuum ? 1 : 0));
  for (const [i, step] of steps.entries()) {
    if (i > 0) await call.pause();
    await store.write(scopes[i]!, step);
    call.advance(1);
  }
  let vacuumed = false;
  if (vacuum) {
    await call.pause();
    try {
      // VACUUM rewrites the whole file: other connections' writes wait for it (or it waits for them).
      await store.vacuum();
      vacuumed = true;
    } catch (error) {
      if (!(error instanceof DatabaseError && error.code === "BUSY")) throw error;
    }
  }
  const report: PruneReport = { ...removed, vacuumed, bytesBefore, bytesAfter: await store.sizeBytes() };
  call.finish();
  ctx.events.emit("prune", report);
  return report;
}

type Removed = Pick<PruneReport, "checkpoints" | "snapshots" | "moves" | "files">;

function* knownSession(tx: Tx, sessionId: string): Step<void> {
  if (!(yield* tx.getSession(sessionId))) throw new NotFoundError("session", sessionId);
}

function* dropExpiredCheckpoints(ctx: EngineContext, tx: Tx, sessionId: string | undefined, removed: Removed): Step<void> {
  if (sessionId !== undefined) yield* knownSession(tx, sessionId);
  // Retention policies are weighed in full first, so what they drop is deleted with the expired checkpoints.
  for (const id of yield* tx.sessionsWithRetention(sessionId)) yield* retainAll(tx, (yield* tx.getSession(id))!, ctx.now());
  removed.checkpoints = (yield* tx.deleteExpiredCheckpoints(ctx.now(), sessionId)).length;
}

function* dropFinishedMoves(tx: Tx, sessionId: string | undefined, removed: Removed): Step<void> {
  removed.moves = yield* tx.deleteFinishedMoves(sessionId);
}

function* dropUnreferencedSnapshots(tx: Tx, removed: Removed): Step<void> {
  removed.snapshots = yield* tx.deleteUnreferencedSnapshots();
}

function* dropUnreferencedFiles(tx: Tx, removed: Removed): Step<void> {
  removed.files = yield* tx.deleteUnreferencedFiles();
}
