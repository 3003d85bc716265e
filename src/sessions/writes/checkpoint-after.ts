// A checkpoint after messages (none for checkpoint(), a turn's for turn()), with the workspace's files when one is
// attached: one transaction, applied once per request id. The body of checkpoint and turn.
import { ConflictError } from "../../models/errors.js";
import { checkpointInput, parseOptions, type CheckpointInput } from "../../models/inputs.js";
import { toJsonText } from "../../models/json.js";
import type { Checkpoint, Turn } from "../../models/types.js";
import type { Step, Tx, WorkspaceRow } from "../../store/port/index.js";
import { Backoff } from "../core/backoff.js";
import type { EngineContext, SessionRef } from "../core/context.js";
import { checkIfAt, type IfAt } from "../core/if-at.js";
import { moveMayRun } from "../core/ownership.js";
import { refuseCallsElsewhere } from "../moves/refusals.js";
import { toCheckpoint } from "../core/rows.js";
import { findLanding, settleLanding } from "../log/after.js";
import { writeCaptureEntry, writeCheckpoint, writeMessages, type EntryFields } from "../log/writer.js";
import { readTurn, turnAnswer, turnRowAnswer, wroteMessages } from "../requests/answers.js";
import { applyOnce, sameJsonText, writtenRequestOf, type Request } from "../requests/ledger.js";
import { retainAfterCheckpoint } from "../log/retention.js";
import { captureStorable, captureStored, saveCapture, saveCaptureStats, takeCapture, type Capture } from "../workspace/capture.js";
import { assertLocal } from "../workspace/host.js";
import { assertNoRestorePending } from "../workspace/restore-guards.js";
import { resumingOwnRestore } from "../workspace/resume-own.js";
import { sameFilesConfig } from "../workspace/snapshots.js";
import { snapshotCalls } from "../workspace/unapplied.js";
import { takeRunTurn, type RunTurn } from "../workspace/run-turns.js";
import { afterMoves, currentToWrite } from "./after-moves.js";
import { orderedCall } from "../core/call-order.js";
import { servedHandler } from "../../tools/handler-scope.js";

/** How `checkpointAfter` writes: weighing retention or not, recording a request, only while `ifAt` holds. */
export interface CheckpointHow {
  retain?: boolean;
  /** Holds the checkpoint this long (ms) against retention and prune, from its own transaction (a guarded block's). */
  hold?: number;
  request?: { id: string | undefined; verb: string };
  ifAt?: IfAt | undefined;
  /** The messages (and the checkpoint after them) go right after this message, on its own lineage (see `findLanding`). */
  after?: string | undefined;
  /** False for a checkpoint a call already ordered takes (a forced move's): it does not wait for what came after it. */
  ordered?: boolean;
}

/** What a turn (or `checkpoint()`) was asked to write: its messages and its checkpoint's fields. */
interface TurnArgs {
  messages: readonly EntryFields[];
  name: string | null;
  metadata: string | null;
  expiresIn: number | null;
}

/** A retried turn's arguments are the first's when it wrote these messages and a checkpoint of these fields. */
function* sameTurn(tx: Tx, answer: string, args: TurnArgs, checkpointId?: string | null): Step<boolean> {
  const { checkpoint: c, messages, expiresIn } = yield* readTurn(tx, answer, checkpointId);
  const metadata = c.metadata === null ? null : JSON.stringify(c.metadata);
  if (c.name !== args.name || !sameJsonText(metadata, args.metadata) || expiresIn !== args.expiresIn) return false;
  return yield* wroteMessages(tx, messages, args.messages);
}

/**
 * Appends `messages` (already validated; may be none), then records a checkpoint after them: one transaction,
 * so a crash leaves either all of it or nothing. Auto checkpoints the messages trigger come first, in order. With
 * `how.request`, the call is applied once per session and request id (the ledger records it in that transaction).
 */
export async function checkpointAfter(
  ctx: EngineContext,
  ref: SessionRef,
  messages: EntryFields[],
  input: CheckpointInput = {},
  how: CheckpointHow = {},
): Promise<Turn> {
  const o = parseOptions(checkpointInput, input, "checkpoint");
  const metadata = o.metadata == null ? null : toJsonText(o.metadata, "metadata", ctx.limits);
  const fields = {
    name: o.name ?? null,
    expiresIn: o.expiresIn,
    metadata,
    retain: how.retain ?? true,
    hold: how.hold,
    ifAt: how.ifAt,
    after: how.after,
  };
  // A retry is told apart by what the first call wrote (no hash on the way in); `after` is an argument nothing holds.
  const mark = how.after === undefined ? how.request?.verb : `${how.request?.verb}>${how.after}`;
  const args: TurnArgs = { messages, name: fields.name, metadata, expiresIn: fields.expiresIn ?? null };
  const request = how.request && writtenRequestOf(how.request.id, mark!, turnAnswer, sameTurn, args);
  // In the handle's order as a whole, its files' scan included: what is made after it goes after all of it.
  const write = () =>
    applyOnce(ctx, ref, request, async () => {
      // A session with a workspace: its files are read outside the transaction, then stored with the checkpoint.
      let files: Capture | null = null;
      let running: RunTurn | null = null;
      const backoff = Backoff.for(ctx.busyWaitMs);
      try {
        for (;;) {
          const unit = () =>
            afterMoves(
              ctx,
              ref,
              () => ctx.store.write({ sessionId: ref.id }, (tx) => checkpointUnit(ctx, tx, ref, messages, fields, files, request)),
              false,
            );
          const out = await resumingOwnRestore(ctx, ref.id, unit).catch((error: unknown) => {
            if (!busyElsewhere.has(error as object) || backoff.spent) throw error;
            return null;
          });
          if (out === null) {
            // Another process's call or move of the session runs: it ends by itself. Files read before may have changed,
            // and this process's own calls need not wait meanwhile.
            files = null;
            running?.release();
            running = null;
            await backoff.pause();
            continue;
          }
          if ("scan" in out) {
            // No tool runs on the directory while its files are captured and recorded (see run-turns.ts): a call is in
            // them done, or not yet begun, never half done (unless taken from inside that call's own run).
            // Not gone ahead beside a run of this process that outlasts the wait (its files are half done, and the run's
            // changes would no longer count as its own): refused, as a call another process runs is once that wait is spent.
            running ??= await takeRunTurn(out.scan.dir, ctx.closing, undefined, true);
            if (!running) throw busyHere(out.scan.dir);
            files = await takeCapture(ctx, out.scan);
            continue;
          }
          if (files) await captureStored(ctx, files);
          // What the capture left out is said with the checkpoint it returns (not kept: a retry's answer lacks it).
          const turn =
            files && files.skipped.length > 0 ? { ...out.turn, checkpoint: { ...out.turn.checkpoint, skipped: files.skipped } } : out.turn;
          for (const cp of out.auto) ctx.events.emit("checkpoint", cp);
          ctx.events.emit("checkpoint", turn.checkpoint);
          return turn;
        }
      } finally {
        running?.release();
      }
    });
  return how.ordered === false || servedHandler(ref.id) ? write() : orderedCall(ctx.events, ref.id, true, write);
}

/** The refusal of a capture while a tool call or a move of this process has run on `dir` longer than a turn's wait. */
const busyHere = (dir: string) =>
  new ConflictError(
    `a tool call (or a move) of this process has been running on the workspace ${dir} longer than a checkpoint waits ` +
      "for it: files read now would hold part of its effect; try again when it ends",
    "CALL_IN_PROGRESS",
  );

/** Refusals for a call or move another process runs on the session: `checkpointAfter` tries again, up to `busyWaitMs`. */
const busyElsewhere = new WeakSet<object>();

/** The unit of `checkpointAfter`: writes the messages and the checkpoint, or asks for the workspace to be scanned first. */
function* checkpointUnit(
  ctx: EngineContext,
  tx: Tx,
  ref: SessionRef,
  messages: EntryFields[],
  o: {
    name: string | null;
    expiresIn: number | undefined;
    metadata: string | null;
    retain: boolean;
    hold: number | undefined;
    ifAt: IfAt | undefined;
    after: string | undefined;
  },
  files: Capture | null,
  request: Request<Turn & { expiresIn?: number | null }> | undefined,
): Step<{ turn: Turn; auto: Checkpoint[] } | { scan: WorkspaceRow }> {
  const current = yield* currentToWrite(ctx, tx, ref.id, ref.userId);
  const { session, head: start } = current;
  yield* checkIfAt(tx, session, o.ifAt, start.position);
  const at = o.after === undefined ? { branchId: current.branch.id, head: start } : yield* findLanding(tx, session, current, o.after);
  // The workspace's files are the current branch's: a turn landing on another branch captures none.
  const ws = session.hasWorkspace && at.branchId === current.branch.id ? yield* tx.getWorkspace(session.id) : undefined;
  if (ws) assertLocal(ws, "checkpoint");
  // A restore of the directory is under way (or was interrupted): its files are half one version, half another.
  if (ws) assertNoRestorePending(ws);
  // A move of the session's world runs its tools elsewhere: files read now would hold some of its steps and not others.
  // A call running elsewhere: files read now may hold part of its effect while the snapshot records it as not begun.
  // Either ends by itself: `checkpointAfter` waits for it (see `busyElsewhere`).
  if (ws) {
    try {
      yield* refuseMoveUnderWay(ctx, tx, ws);
      if (session.hasTools) yield* refuseCallsElsewhere(ctx, tx, session.id, ` and may be changing the workspace ${ws.dir}`);
    } catch (error) {
      busyElsewhere.add(error as object);
      throw error;
    }
  }
  // The scan request must stay before any write: returning commits this transaction.
  if (ws && (!files || !sameFilesConfig(files, ws) || !(yield* captureStorable(tx, files, ws)))) return { scan: ws };
  yield* settleLanding(ctx, tx, at);
  const written = yield* writeMessages(ctx, tx, session, at.branchId, at.head, messages);
  // A capture of files is an entry of its own: each such checkpoint is a point a rollback forks from (messages or none).
  const head = ws && files ? yield* writeCaptureEntry(ctx, tx, at.branchId, written.head) : written.head;
  const now = ctx.now();
  const row = yield* writeCheckpoint(ctx, tx, session, at.branchId, head, {
    name: o.name,
    auto: false,
    metadata: o.metadata,
    // Counted from the checkpoint's createdAt, which may be later than `now` (see `CheckpointFields.expiresIn`).
    expiresIn: o.expiresIn,
    // The request is kept on the checkpoint's row: one index entry, where the ledger's table costs a row and one.
    request: request && { id: request.id, fingerprint: request.fingerprint, answer: turnRowAnswer(written.messages, o.expiresIn ?? null) },
  });
  if (o.hold !== undefined) yield* tx.holdCheckpoint(row.id, session.id, o.hold);
  if (ws && files) {
    const manifestId = yield* saveCapture(tx, files);
    yield* saveCaptureStats(tx, files);
    yield* tx.insertCheckpointFiles({
      checkpointId: row.id,
      manifestId,
      dir: files.dir,
      exclude: files.exclude,
      gitignore: files.gitignore,
      // What the files hold of the lineage's calls: a move stopped by a failing undo leaves some undone.
      ...(yield* snapshotCalls(tx, session, at.branchId, head.position)),
    });
    yield* tx.setWorkspaceManifest(session.id, manifestId, now);
  }
  // A session without a retention policy pays nothing more here.
  if (o.retain && session.retention !== null) yield* retainAfterCheckpoint(tx, session, row, now);
  return { turn: { messages: written.messages, checkpoint: toCheckpoint(row) }, auto: written.checkpoints };
}

/**
 * `MOVE_IN_PROGRESS` while a move of the session may be running its tools elsewhere (another handle, process or server):
 * a capture then would hold some of its steps' effects while the track says others. A move whose owner is gone is
 * taken over by recovery, not waited for.
 */
function* refuseMoveUnderWay(ctx: EngineContext, tx: Tx, ws: WorkspaceRow): Step<void> {
  const running = (yield* tx.runningMoves(ws.sessionId)).filter((m) => moveMayRun(ctx.ownership, m));
  if (running.length === 0) return;
  throw new ConflictError(
    `a move of this session is under way (${running.map((m) => `${m.id}, process ${m.pid}`).join("; ")}) and changes the workspace ${ws.dir}: ` +
      "checkpoint again when it ends",
    "MOVE_IN_PROGRESS",
  );
}
