// checkpoint: a named, immutable point at the current branch's head (after messages given with it, as turn does).
import { assertLocal } from "./workspace/host.js";
import { checkpointInput, checkpointOptions, parseOptions, type CheckpointInput, type CheckpointOptions } from "../models/inputs.js";
import { toJsonText } from "../models/json.js";
import type { Checkpoint, Turn } from "../models/types.js";
import type { Step, Tx, WorkspaceRow } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { checkIfAt, type IfAt } from "./core/if-at.js";
import { findLanding, settleLanding } from "./log/after.js";
import { ownedCurrent } from "./core/owned.js";
import { retainAfterCheckpoint } from "./retention.js";
import { toCheckpoint } from "./core/rows.js";
import { writeCaptureEntry, writeCheckpoint, writeMessages, type EntryFields } from "./log/writer.js";
import { messagesAnswer } from "./append.js";
import { checkpointJson } from "./requests/answers.js";
import { applyOnce, recordRequest, requestOf, type AnswerCodec, type Request } from "./requests/ledger.js";
import {
  captureStorable,
  captureStored,
  saveCapture,
  saveCaptureStats,
  sameFilesConfig,
  takeCapture,
  type Capture,
} from "./workspace/workspace.js";

/**
 * `checkpoint()`: with `requestId`, applied once per session; with `ifAt`, only while the session is there. With
 * `retain: false` the session's retention policy is not weighed (a clone's mark must not push out what it copies);
 * with `hold` (ms) the checkpoint is held against retention and prune from the transaction that writes it.
 */
export async function createCheckpoint(
  ctx: EngineContext,
  ref: SessionRef,
  input: CheckpointOptions = {},
  how: { retain?: boolean; hold?: number } = {},
): Promise<Checkpoint> {
  const { requestId, ifAt, ...fields } = parseOptions(checkpointOptions, input, "checkpoint");
  const request = requestId === undefined ? {} : { request: { id: requestId, verb: "checkpoint" } };
  return (await checkpointAfter(ctx, ref, [], fields, { ...how, ...request, ifAt })).checkpoint;
}

/** How `checkpointAfter` writes: weighing retention or not, recording a request, only while `ifAt` holds. */
export interface CheckpointHow {
  retain?: boolean;
  /** Holds the checkpoint this long (ms) against retention and prune, from its own transaction (a guarded block's). */
  hold?: number;
  request?: { id: string | undefined; verb: string };
  ifAt?: IfAt | undefined;
  /** The messages (and the checkpoint after them) go right after this message, on its own lineage (see `findLanding`). */
  after?: string | undefined;
}

/**
 * A turn as the request ledger keeps it: its messages as `append`'s are kept, and its checkpoint whole (small, and the
 * checkpoint may be deleted or expire before a retry).
 */
const turnAnswer: AnswerCodec<Turn> = {
  encode: ({ messages, checkpoint }) =>
    JSON.stringify({ messages: messagesAnswer.encode(messages), checkpoint: checkpointJson.encode(checkpoint) }),
  *decode(tx, answer) {
    const { messages, checkpoint } = JSON.parse(answer) as { messages: string; checkpoint: Parameters<typeof checkpointJson.decode>[0] };
    return { messages: yield* messagesAnswer.decode(tx, messages), checkpoint: checkpointJson.decode(checkpoint) };
  },
};

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
  const metadata = o.metadata === undefined ? null : toJsonText(o.metadata, "metadata", ctx.limits);
  const fields = {
    name: o.name ?? null,
    expiresIn: o.expiresIn,
    metadata,
    retain: how.retain ?? true,
    hold: how.hold,
    ifAt: how.ifAt,
    after: how.after,
  };
  const request =
    how.request &&
    requestOf(
      how.request.id,
      how.request.verb,
      {
        messages,
        checkpoint: { name: fields.name, expiresIn: fields.expiresIn ?? null, metadata },
        ...(how.after === undefined ? {} : { after: how.after }),
      },
      turnAnswer,
    );
  return applyOnce(ctx, ref, request, async () => {
    // A session with a workspace: its files are read outside the transaction, then stored with the checkpoint.
    let files: Capture | null = null;
    for (;;) {
      const out = await ctx.store.write({ sessionId: ref.id }, (tx) => checkpointUnit(ctx, tx, ref, messages, fields, files, request));
      if ("scan" in out) {
        files = await takeCapture(ctx, out.scan);
        continue;
      }
      if (files) await captureStored(ctx, files);
      for (const cp of out.auto) ctx.events.emit("checkpoint", cp);
      ctx.events.emit("checkpoint", out.turn.checkpoint);
      return out.turn;
    }
  });
}

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
  request: Request<Turn> | undefined,
): Step<{ turn: Turn; auto: Checkpoint[] } | { scan: WorkspaceRow }> {
  const current = yield* ownedCurrent(tx, ref.id, ref.userId);
  const { session, head: start } = current;
  yield* checkIfAt(tx, session, o.ifAt, start.position);
  const at = o.after === undefined ? { branchId: current.branch.id, head: start } : yield* findLanding(tx, session, current, o.after);
  // The workspace's files are the current branch's: a turn landing on another branch captures none.
  const ws = session.hasWorkspace && at.branchId === current.branch.id ? yield* tx.getWorkspace(session.id) : undefined;
  if (ws) assertLocal(ws, "checkpoint");
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
    expiresAt: o.expiresIn === undefined ? null : now + o.expiresIn,
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
    });
    yield* tx.setWorkspaceManifest(session.id, manifestId, now);
  }
  // A session without a retention policy pays nothing more here.
  if (o.retain && session.retention !== null) yield* retainAfterCheckpoint(tx, session, row.id, now);
  const turn = { messages: written.messages, checkpoint: toCheckpoint(row) };
  yield* recordRequest(ctx, tx, session.id, request, turn);
  return { turn, auto: written.checkpoints };
}
