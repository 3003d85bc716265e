// The call journal: a tool call is written before it runs, then completed once (and its effect marked applied).
// Just over 450 lines: journal, run and completion are one protocol whose steps share their failure handling.
import { ConflictError, DatabaseError, ForkpointError, NotFoundError, errorText } from "../../models/errors.js";
import { resultAsJson, wellFormedJsonText, type JsonValue } from "../../models/json.js";
import type { Limits } from "../../models/limits.js";
import type { Checkpoint, ToolInvocation } from "../../models/types.js";
import type { EntryRow, SessionRow, Step, Tx } from "../../store/port/index.js";
import type { ToolDefinition } from "../../tools/define-tool.js";
import { abandonedAtClose, runHandler } from "../../tools/run-handler.js";
import type { EngineContext, SessionRef } from "../core/context.js";
import { checkIfAt, type IfAt } from "../core/if-at.js";
import { ownedSession } from "../core/owned.js";
import { toCheckpoint, toToolInvocation } from "../core/rows.js";
import { toolResultHash } from "../integrity/hashes.js";
import { headOf, headOfEntry } from "../core/head.js";
import { findLanding, settleLanding } from "../log/after.js";
import { writeCheckpoint, writeEntry } from "../log/writer.js";
import { retainAfterWrite } from "../log/retention.js";
import { holdLease } from "../moves/lease.js";
import { refuseConcurrentMove } from "../moves/refusals.js";
import { callMayRun, inflightInvocations } from "../core/ownership.js";
import { applyOnce, jsonArgument, recordRequest, requestOf, type AnswerCodec, type Request } from "../requests/ledger.js";
import { takeRunTurn } from "../workspace/run-turns.js";
import { assertNoRestorePending } from "../workspace/restore-guards.js";
import { filesBefore, landChanges, landInCompletion, scanChanges, type ScannedChanges } from "../workspace/absorb.js";
import { withNamedFiles } from "../workspace/named-files.js";
import { landInBackground, lostConnection, settleFirst } from "./landing.js";
import { noteJournaled } from "./journal-watch.js";

/**
 * Writes a tool call onto the current branch (status running until completed), with whether its tool had an `undo`
 * here (null: not known, for a recorded call of a tool not registered here). With `after` (a message id), the call
 * follows that message on its own lineage, as messages appended `after` it do (see `findLanding`): off the current
 * branch once the session has moved on, its effect then held in the world as any applied call off the lineage is (the
 * next move undoes it, unless it goes to the call's branch). With `own` (an agent loop's calls made before), never after
 * another loop's calls that follow the message (see `findLanding`).
 */
export function* journalCall(
  ctx: EngineContext,
  tx: Tx,
  session: SessionRow,
  tool: string,
  argsText: string,
  callId: string | null,
  reversible: boolean | null,
  after?: string,
  own?: ReadonlySet<string>,
): Step<EntryRow> {
  if (session.hasTools) yield* refuseConcurrentMove(ctx, tx, session.id);
  // A "files" move restoring the workspace elsewhere has planned the tool track without this call: refused until it ends.
  const ws = session.hasWorkspace ? yield* tx.getWorkspace(session.id) : undefined;
  if (ws) assertNoRestorePending(ws);
  const branch = (yield* tx.getBranch(session.currentBranchId))!;
  const head = yield* headOf(tx, branch);
  const at =
    after === undefined
      ? { branchId: branch.id, head }
      : yield* findLanding(tx, session, { branch, head }, after, undefined, own, own !== undefined, own === undefined);
  yield* settleLanding(ctx, tx, at);
  const row = yield* writeEntry(ctx, tx, at.branchId, at.head, { kind: "tool", tool, content: argsText, callId, reversible });
  yield* noteJournaled(tx, row);
  if (!session.hasTools) yield* tx.markHasTools(session.id);
  return row;
}

/** A completed call as the caller and the "tool" event see it, and the automatic checkpoint after it (if any). */
export interface Completed {
  invocation: ToolInvocation;
  checkpoint: Checkpoint | undefined;
}

/** Completes a call once; a succeeded call's effect joins the world's applied set. */
export function* completeCall(
  ctx: EngineContext,
  tx: Tx,
  session: SessionRow,
  entry: EntryRow,
  outcome: { result: string | null; error: string | null },
): Step<Completed> {
  const status = outcome.error === null ? "succeeded" : "failed";
  const completion = { entryId: entry.id, status, result: outcome.result, error: outcome.error, completedAt: ctx.now() } as const;
  yield* tx.insertToolResult({ ...completion, hash: toolResultHash(entry.hash, completion) });
  if (status === "succeeded") yield* tx.markApplied(entry.id, session.id, outcome.result, completion.completedAt);
  const invocation = toToolInvocation((yield* tx.getTool(entry.id))!);
  if (!ctx.autoCheckpoint.afterToolCalls) return { invocation, checkpoint: undefined };
  // Right after the call, not at the branch's head now: what was written while the tool ran came after it.
  const at = headOfEntry(entry);
  const row = yield* writeCheckpoint(ctx, tx, session, entry.branchId, at, { name: null, auto: true, metadata: null });
  yield* retainAfterWrite(tx, session, row, row.createdAt);
  const checkpoint = toCheckpoint(row);
  return { invocation, checkpoint };
}

/**
 * A failed call's error as stored: `{ message, name? }` (and `extra`). The message is what the tool made, like its
 * result: lone surrogates in it become U+FFFD (see resultAsJson); one too long to store is cut short, saying so, so that
 * what is stored always fits the payload limit (and so exports and imports).
 */
export function errorJson(error: unknown, limits: Pick<Limits, "maxPayloadBytes">, extra: { code?: string } = {}): string {
  const fields = { ...(error instanceof Error ? { name: error.name } : {}), ...extra };
  const full = wellFormedJsonText(JSON.stringify({ message: errorText(error), ...fields }));
  // String length is a lower bound of the UTF-8 size; only measure bytes when it might matter.
  if (full.length * 3 <= limits.maxPayloadBytes || Buffer.byteLength(full, "utf8") <= limits.maxPayloadBytes) return full;
  const message = errorText(error);
  const note = ` … (cut short: the message was ${message.length} characters, over the payload limit of ${limits.maxPayloadBytes} bytes)`;
  // A character takes at most 6 bytes as JSON text (an escape); the rest of the object fits in the margin kept.
  const keep = Math.max(0, Math.floor((limits.maxPayloadBytes - 2 * note.length - 256) / 6));
  return wellFormedJsonText(JSON.stringify({ message: message.slice(0, keep) + note, ...fields }));
}

/**
 * The error recorded for a call whose tool ran but whose result cannot be stored (`why`, from resultAsJson): the call
 * is failed, so no move undoes it, and the record says its effect happened.
 */
function unstorableResultJson(why: ForkpointError, limits: Pick<Limits, "maxPayloadBytes">): string {
  const message = `the tool ran, but its result could not be stored (${errorText(why)}); the call is recorded as failed, so moves will not undo its effect`;
  return errorJson(Object.assign(new Error(message), { name: why.name }), limits, { code: why.code });
}

export function emitCompleted(ctx: EngineContext, { invocation, checkpoint }: Completed): ToolInvocation {
  ctx.events.emit("tool", invocation);
  if (checkpoint) ctx.events.emit("checkpoint", checkpoint);
  return invocation;
}

/** How an adapter's call is made: the framework's call id, and the branch the call must still be on (else refused). */
export interface CallOptions {
  callId?: string | null;
  onBranch?: string;
  /** `invoke`'s request id (the call runs once per session and id) and precondition. */
  requestId?: string | undefined;
  ifAt?: IfAt | undefined;
  /** The message the call follows, on its own lineage (see `journalCall`). */
  after?: string | undefined;
  /**
   * An adapter's precondition, checked in the unit that journals the call, before it is written (after the branch
   * check): what it throws refuses the call, nothing written. It reads what it checks in that unit, so no write of
   * another handle, process or server lands between its check and the journal.
   */
  check?: CallCheck | undefined;
  /**
   * The calls the adapter's loop made before this one (ids, or `ownCallKey`s): a branch forked right after `after`
   * keeps only those of the calls that follow it (see `forkRightAfter`), not another loop's answering the same message.
   * A function is read in the unit that journals the call: the loop's calls started with this one (a step's, which the
   * AI SDK runs at once) and journaled before it are then among them.
   */
  ownCalls?: readonly string[] | (() => Iterable<string>) | undefined;
}

/** A call's precondition (see `CallOptions.check`): a module-level unit body and what it is given. */
export interface CallCheck<C = unknown> {
  // Method syntax: a check of any context is a `CallCheck` (its unit is only ever given its own context).
  unit(tx: Tx, session: SessionRow, context: C): Step<void>;
  context: C;
}

/** A journal unit's outcome: the call journaled now, or the one a request with the same id journaled before. */
type Journaled = { session: SessionRow; entry: EntryRow } | { recorded: string };

/** A tool call as the request ledger keeps it: its invocation's id, whose completion a retry reads. */
const journaledAnswer: AnswerCodec<Journaled> = {
  encode: (j) => JSON.stringify("entry" in j ? j.entry.id : j.recorded),
  *decode(_tx, answer) {
    return { recorded: JSON.parse(answer) as string };
  },
};

export async function journalRunComplete(
  ctx: EngineContext,
  ref: SessionRef,
  tool: ToolDefinition,
  argsText: string,
  call: CallOptions,
): Promise<unknown> {
  const name = tool.name;
  // Closing: the call is not journaled (its handler would not be started).
  if (ctx.closing.aborted) throw new DatabaseError("CLOSED", `the forkpoint database is closing: tool ${JSON.stringify(name)} was not run`);
  // Calls the unit marked in flight: those of attempts that did not commit (all of them if it failed) are not.
  const marked: string[] = [];
  const unmark = (kept: string | null) => {
    for (const id of marked) if (id !== kept) inflightInvocations.delete(id);
  };
  // The same request id again: the call journaled first is answered for, its tool never run twice.
  // `after` is an argument: the same id following another message is another call.
  const args = call.after === undefined ? [name, jsonArgument(argsText)] : [name, jsonArgument(argsText), call.after];
  const request = call.requestId === undefined ? undefined : requestOf(call.requestId, "invoke", args, journaledAnswer);
  const journaled = await applyOnce(ctx, ref, request, () =>
    ctx.store
      .write({ sessionId: ref.id }, (tx) => journalRunCompleteUnit(tx, ref, call, name, ctx, argsText, tool, marked, request))
      .then(
        (fresh) => (unmark(fresh.entry.id), fresh),
        (error: unknown) => {
          unmark(null);
          throw error;
        },
      ),
  );
  if ("recorded" in journaled) {
    // A completion this process still writes after a lost connection: the retry answers with it once it lands.
    await settleFirst(journaled.recorded);
    const answer = () => ctx.store.read((tx) => recordedCall(ctx, tx, ref.id, journaled.recorded));
    // A read whose snapshot began before this process's call completed sees it running with no handler left here
    // (its completion committed meanwhile): read again, once, before calling its outcome unknown.
    return answer().catch((error: unknown) => {
      if (error instanceof ConflictError && error.code === "CALL_UNKNOWN") return answer();
      throw error;
    });
  }
  const { session, entry } = journaled;
  // The call's owner keeps its lease for as long as the call runs, until its completion is written.
  const lease = holdLease(ctx, session.id, `tool call ${entry.id}`, (tx, leaseMs) => tx.renewCall(entry.id, ctx.ownership.self, leaseMs));
  const release = async () => {
    inflightInvocations.delete(entry.id);
    await lease.release();
  };
  let landsLater = false;
  try {
    return await runAndComplete(ctx, ref, tool, argsText, session, entry, (attempt) => {
      landsLater = true;
      landInBackground(ctx, entry.id, attempt, release);
    });
  } finally {
    if (!landsLater) await release();
  }
}

async function runAndComplete(
  ctx: EngineContext,
  ref: SessionRef,
  tool: ToolDefinition,
  argsText: string,
  session: SessionRow,
  entry: EntryRow,
  landLater: (attempt: () => Promise<void>) => void,
): Promise<unknown> {
  const ws = session.hasWorkspace ? await ctx.store.read((tx) => tx.getWorkspace(session.id)) : undefined;
  // One run at a time on a workspace (see run-turns.ts), held until what this one changed is scanned.
  const turn = ws ? await takeRunTurn(ws.dir, ctx.closing) : null;
  const within = <T>(fn: () => T): T => (turn ? turn.within(fn) : fn());
  // The turn passes on once the run's completion is written and its handler has settled (one that outlives its time
  // limit still writes).
  let handler: Promise<unknown> | undefined;
  const passTurn = () => {
    if (turn && handler) void handler.then(turn.release, turn.release);
    else turn?.release();
  };
  try {
    // The workspace's files before the tool runs: what it changes becomes known to forkpoint (not drift).
    const before = await filesBefore(ctx, ws);
    const complete = async (outcome: { result: string | null; error: string | null }): Promise<void> => {
      // What the run changed in the files, scanned first: the completion makes it known (see `landInCompletion`).
      // A run that changed no file: the files its arguments name, as it found them (see `withNamedFiles`).
      const run = await scanChanges(ctx, session.id, before);
      const found = ws ? withNamedFiles(run, ws.dir, JSON.parse(argsText) as JsonValue) : run;
      // Another run went on meanwhile: the changes are made known, but are not this call's alone to record.
      const scanned = turn?.shared ? null : found;
      if (turn?.shared) await landChanges(ctx, found);
      const finish = async (completed: Completed | null, landed: boolean) => {
        await landChanges(ctx, scanned, entry.id, landed);
        if (completed) emitCompleted(ctx, completed);
      };
      let completed: { done: Completed; recorded: boolean };
      try {
        completed = await ctx.store.write({ sessionId: ref.id }, (tx) => completeWithPathsUnit(tx, session, ctx, entry, outcome, scanned));
      } catch (error) {
        // Deleted (by another handle, process or server) while the tool ran: the caller learns that its effect happened.
        if (error instanceof NotFoundError && error.kind === "session" && outcome.error === null)
          throw deletedWhileRunning(error, entry.id);
        // The connection was lost: the completion may or may not have landed. Either way the caller gets the error (the
        // call's result is not known to have been recorded), and this handle writes the completion, once, when it can.
        if (lostConnection(error))
          landLater(async () => {
            const landed = await ctx.store.write({ sessionId: ref.id }, (tx) => completeUnlessLanded(tx, session, ctx, entry, outcome));
            // The completion that landed (or the resolution) made the changes known already, or left them drift.
            if (landed === null) return;
            await finish(landed, false).catch((e: unknown) =>
              ctx.logger.warn(`forkpoint: after the late completion of tool call ${entry.id}`, e),
            );
          });
        throw error;
      } finally {
        // Held until the completion is written: a checkpoint waiting for it then sees the call done, not half done.
        passTurn();
      }
      await finish(completed.done, completed.recorded);
    };
    let value: unknown;
    try {
      const args = JSON.parse(argsText) as JsonValue;
      const handlerCall = { tool, step: "run", sessionId: session.id, invocationId: entry.id, mode: "call", closing: ctx.closing } as const;
      // A timed-out run is a failed call: its late result is never recorded.
      value = await within(() =>
        runHandler(
          handlerCall,
          (signal) =>
            (handler = (async () =>
              tool.run(args, {
                sessionId: session.id,
                userId: session.userId,
                invocationId: entry.id,
                callId: entry.callId,
                replay: false,
                signal,
              }))()),
        ),
      );
    } catch (error) {
      // Closed while the tool ran, which may still finish: left running, as a crash there leaves it (its outcome
      // unknown, never run again, until resolveToolCall records it), not failed (no move would undo its effect).
      if (abandonedAtClose(ctx.closing, error)) throw error;
      try {
        await complete({ result: null, error: errorJson(error, ctx.limits) });
      } catch (gone) {
        // The session went while the tool ran: the caller still learns how the tool ended.
        if (gone instanceof NotFoundError && gone.kind === "session") throw deletedWhileRunning(gone, entry.id, error);
        throw gone;
      }
      throw error;
    }
    // Once `run` has returned, its effect is in the world; a result that cannot be stored is never stored as something
    // else: the call is recorded as failed, saying so, and the caller gets the typed error.
    let resultText: string;
    try {
      resultText = resultAsJson(value, ctx.limits);
    } catch (error) {
      if (!(error instanceof ForkpointError)) throw error;
      await complete({ result: null, error: unstorableResultJson(error, ctx.limits) });
      throw error;
    }
    await complete({ result: resultText, error: null });
    return value;
  } finally {
    passTurn();
  }
}

function* completeUnit(
  tx: Tx,
  session: SessionRow,
  ctx: EngineContext,
  entry: EntryRow,
  outcome: { result: string | null; error: string | null },
) {
  // The session may have been deleted (by another process) while the tool ran.
  yield* ownedSession(tx, session.id, session.userId);
  yield* tx.deleteCallOwner(entry.id);
  return yield* completeCall(ctx, tx, session, entry, outcome);
}

/**
 * The completion, with what the run changed in the files made known (one write): no move finds the call ended and its
 * files not yet known.
 */
function* completeWithPathsUnit(
  tx: Tx,
  session: SessionRow,
  ctx: EngineContext,
  entry: EntryRow,
  outcome: { result: string | null; error: string | null },
  scanned: ScannedChanges | null,
): Step<{ done: Completed; recorded: boolean }> {
  const done = yield* completeUnit(tx, session, ctx, entry, outcome);
  return { done, recorded: yield* landInCompletion(tx, ctx, scanned, entry.id) };
}

/** The completion again after a lost connection: nothing when it landed (the lost commit was made) or was resolved. */
function* completeUnlessLanded(
  tx: Tx,
  session: SessionRow,
  ctx: EngineContext,
  entry: EntryRow,
  outcome: { result: string | null; error: string | null },
): Step<Completed | null> {
  const row = yield* tx.getTool(entry.id);
  if (row && row.status !== null) return null;
  return yield* completeUnit(tx, session, ctx, entry, outcome);
}

function* journalRunCompleteUnit(
  tx: Tx,
  ref: SessionRef,
  call: CallOptions,
  name: string,
  ctx: EngineContext,
  argsText: string,
  tool: ToolDefinition<any, any>,
  marked: string[],
  request: Request<Journaled> | undefined,
): Step<{ session: SessionRow; entry: EntryRow }> {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  yield* checkIfAt(tx, session, call.ifAt);
  // Checked where the call is journaled: a move that finished while this call waited is seen.
  if (call.onBranch !== undefined && session.currentBranchId !== call.onBranch) {
    throw new ConflictError(
      `session ${JSON.stringify(session.id)} moved to another branch since this call's loop began: ${JSON.stringify(name)} not run`,
      "SESSION_MOVED",
    );
  }
  if (call.check) yield* call.check.unit(tx, session, call.check.context);
  const entry = yield* journalCall(
    ctx,
    tx,
    session,
    name,
    argsText,
    call.callId ?? null,
    typeof tool.undo === "function",
    call.after,
    call.ownCalls === undefined ? undefined : new Set(typeof call.ownCalls === "function" ? call.ownCalls() : call.ownCalls),
  );
  // This thread runs it: a move elsewhere refuses while that holds (see refuseLiveCalls). In flight from this
  // transaction on, so that another handle of this thread reading the owner next does not take it for a dead one's.
  yield* tx.insertCallOwner(entry.id, session.id, ctx.ownership.self, ctx.ownership.leaseMs);
  inflightInvocations.add(entry.id);
  marked.push(entry.id);
  const journaled = { session, entry };
  // A call no rollback can undo stays applied: its id too.
  yield* recordRequest(ctx, tx, session.id, request, journaled, typeof tool.undo !== "function");
  return journaled;
}

/**
 * What a call journaled by an earlier request with the same id came to: its recorded result, or its recorded error
 * thrown again (an `Error` with the message and name recorded); while its tool still runs, `ConflictError`
 * `CALL_IN_PROGRESS`; when a crash left it without an outcome, `ConflictError` `CALL_UNKNOWN` (see `resolveToolCall`).
 */
function* recordedCall(ctx: EngineContext, tx: Tx, sessionId: string, entryId: string): Step<unknown> {
  const invocation = toToolInvocation((yield* tx.getTool(entryId))!);
  if (invocation.status === "succeeded") return invocation.result;
  if (invocation.status === "failed") {
    const recorded = invocation.error ?? { message: "failed" };
    throw Object.assign(new Error(recorded.message), recorded.name === undefined ? {} : { name: recorded.name });
  }
  const owner = (yield* tx.callOwners(sessionId)).find((c) => c.entryId === entryId);
  if (owner && callMayRun(ctx.ownership, owner))
    throw new ConflictError(
      `the call this request made (${JSON.stringify(invocation.tool)} ${entryId}) is still running; try again when it ends`,
      "CALL_IN_PROGRESS",
    );
  throw new ConflictError(
    `the call this request made (${JSON.stringify(invocation.tool)} ${entryId}) was left running by a process that died: ` +
      "its outcome is unknown; record it with resolveToolCall",
    "CALL_UNKNOWN",
  );
}

/**
 * The error of a call whose session was deleted while its tool ran: the session's, saying what became of the call (its
 * effect happened, or, `failed`, the tool's own error, kept as the cause), recorded nowhere.
 */
function deletedWhileRunning(error: NotFoundError, entryId: string, failed?: unknown): NotFoundError {
  const out = new NotFoundError(error.kind, error.id);
  const how = failed === undefined ? "whose effect happened" : `which failed (${errorText(failed)})`;
  out.message = `${error.message}: it was deleted while tool call ${entryId} ran, ${how}, and is recorded nowhere`;
  if (failed !== undefined) Object.defineProperty(out, "cause", { value: failed, configurable: true, writable: true });
  return out;
}
