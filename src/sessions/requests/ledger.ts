// The request ledger: a write given a `requestId` is applied once per session; a retry answers as the first call did.
// A verb adopts it in three steps: `requestOf` (its id, name, validated arguments and answer codec), `recordRequest`
// in the unit that writes, and `applyOnce` around the call (moves and tool calls also look the id up before they act).
import { ConflictError, NotFoundError } from "../../models/errors.js";
import {
  MAX_REQUEST_ID,
  parseOptions,
  toolCallOptions,
  writeOptions,
  type ToolCallOptions,
  type WriteOptions,
} from "../../models/inputs.js";
import { readingInput } from "../../models/json.js";
import { hasNoNul, isBlank, isWellFormed } from "../../models/strings.js";
import { RequestTakenError, type Step, type Tx } from "../../store/port/index.js";
import { blockMayNote, committedNotes, noteBlockRequest } from "../core/block-scope.js";
import type { EngineContext, SessionRef } from "../core/context.js";
import type { IfAt } from "../core/if-at.js";
import { ownedSession } from "../core/owned.js";
import { canonicalJson, sha256 } from "../integrity/hashes.js";

/** How a verb keeps its answer in the ledger and reads it back, in a read unit, for a retry. */
export interface AnswerCodec<T> {
  encode(value: T): string;
  /** `checkpointId`: the checkpoint whose row keeps the request (a turn's), when it is kept there. */
  decode(tx: Tx, answer: string, checkpointId?: string | null): Step<T>;
}

/** A call given a request id: what the ledger records of it. */
export interface Request<T> {
  readonly id: string;
  /**
   * SHA-256 of the verb and its validated arguments; or, for a verb whose answer names what it wrote (`written`), a
   * mark of the verb alone: a retry's arguments are then compared with what the first call wrote, not hashed.
   */
  readonly fingerprint: string;
  readonly answer: AnswerCodec<T>;
  /** Whether the first call, whose recorded answer is `answer`, wrote what this call would: its arguments (`args`) are the same. */
  readonly written?: { readonly args: unknown; same(tx: Tx, answer: string, args: unknown, checkpointId?: string | null): Step<boolean> };
  /**
   * Whether the first call's answer is what this call would have written, for an argument whose default is read in the
   * unit (an edit's role left out is the original message's): kept out of the fingerprint, compared on a retry.
   */
  sameAnswer?(tx: Tx, value: T): Step<boolean>;
}

/** What every write takes besides its own arguments, validated. */
export interface WriteControl {
  requestId?: string | undefined;
  ifAt?: IfAt | undefined;
}

const NONE: WriteControl = Object.freeze({});

/** A write's `{ requestId, ifAt }` (validated: a `ValidationError` before anything is written). */
export function writeControlOf(options: WriteOptions | undefined): WriteControl {
  // No options (the usual call) is no request and no precondition: nothing to validate on the hot path.
  if (options === undefined) return NONE;
  return quickRequest(options) ?? parseOptions(writeOptions, options, "options");
}

/** A tool call's `{ requestId, ifAt, after }` (`invoke`, `recordToolCall`), validated as `writeControlOf` does. */
export function callControlOf(options: ToolCallOptions | undefined): WriteControl & { after?: string | undefined } {
  if (options === undefined) return NONE;
  return quickRequest(options) ?? parseOptions(toolCallOptions, options, "options");
}

/**
 * `{ requestId }` alone with a valid id, the usual options of a retried write, checked without the schema (what the
 * schema checks, in a fraction of its time); undefined for anything else, which the schema then checks (and names).
 */
export function quickRequest(options: unknown): { requestId: string } | undefined {
  if (typeof options !== "object" || options === null) return undefined;
  const keys = readingInput(() => Object.keys(options), "options");
  if (keys.length !== 1 || keys[0] !== "requestId") return undefined;
  const id = readingInput(() => (options as { requestId: unknown }).requestId, "requestId");
  if (typeof id !== "string" || id.length === 0 || id.length > MAX_REQUEST_ID || isBlank(id) || !isWellFormed(id) || !hasNoNul(id))
    return undefined;
  return { requestId: id };
}

/** The `requestId` of a write's options (validated). */
export function requestIdOf(options: WriteOptions | undefined): string | undefined {
  return writeControlOf(options).requestId;
}

/**
 * The request a call makes, or undefined without an id. `args` are the call's arguments as validated (the texts it
 * stores): the same id with other arguments, or for another verb, is refused. A precondition (`ifAt`) is no argument.
 */
export function requestOf<T>(
  requestId: string | undefined,
  verb: string,
  args: unknown,
  answer: AnswerCodec<T>,
  sameAnswer?: (tx: Tx, value: T) => Step<boolean>,
): Request<T> | undefined {
  if (requestId === undefined) return undefined;
  const request = { id: requestId, fingerprint: fingerprintOf(verb, args), answer };
  return sameAnswer ? { ...request, sameAnswer } : request;
}

/**
 * The request of a write whose answer names what it wrote (messages, a checkpoint): nothing is hashed as the call is
 * made; a retry reads what the first call wrote and `same` compares it with its arguments `args` (on the hot path of
 * `append` and `turn`, hashing the messages cost more than recording the request). `mark` is the verb and any argument
 * the answer does not hold (`append`'s `after`).
 */
export function writtenRequestOf<T, A>(
  requestId: string | undefined,
  mark: string,
  answer: AnswerCodec<T>,
  same: (tx: Tx, answer: string, args: A, checkpointId?: string | null) => Step<boolean>,
  args: A,
): Request<T> | undefined {
  if (requestId === undefined) return undefined;
  return {
    id: requestId,
    fingerprint: `=${mark}`,
    answer,
    written: { args, same: same as (tx: Tx, answer: string, args: unknown, checkpointId?: string | null) => Step<boolean> },
  };
}

/**
 * A JSON text argument as its value, for a fingerprint: canonical JSON then makes a retry whose JSON lists its keys in
 * another order (read back from a jsonb column, written by another language) the same call.
 */
export const jsonArgument = (text: string | null | undefined): unknown => (text === null || text === undefined ? null : JSON.parse(text));

/** Whether two JSON texts (or nulls) hold the same value, whatever their key order: the texts compared first. */
export function sameJsonText(a: string | null | undefined, b: string | null | undefined): boolean {
  if ((a ?? null) === (b ?? null)) return true;
  return typeof a === "string" && typeof b === "string" && canonicalJson(JSON.parse(a)) === canonicalJson(JSON.parse(b));
}

/** The fingerprint of a call: SHA-256 of its verb and arguments as canonical JSON. */
export function fingerprintOf(verb: string, args: unknown): string {
  return sha256(canonicalJson([verb, args]));
}

/**
 * In the unit that writes the call's effect: records the request and its answer, in the same transaction. A session
 * that applied the id already fails the unit (`RequestTakenError`), which `applyOnce` answers from the ledger.
 * `stays`: a failed block's rollback does not take the write back (a call without an undo, a deleted checkpoint), so
 * its id stays applied.
 */
export function* recordRequest<T>(
  ctx: EngineContext,
  tx: Tx,
  sessionId: string,
  request: Request<T> | undefined,
  value: T,
  stays = false,
): Step<void> {
  if (!request) return;
  const note = !stays && (yield* blockMayNote(ctx.events, tx, sessionId, request.id));
  yield* tx.insertRequest({
    sessionId,
    requestId: request.id,
    fingerprint: request.fingerprint,
    answer: request.answer.encode(value),
    createdAt: ctx.now(),
  });
  // Noted once recorded (and, under `applyOnce`, once committed): a refused record is not the block's to forget.
  if (note) noteBlockRequest(ctx.events, sessionId, request.id);
}

/**
 * Runs `write` (whose unit records `request`) once per session and request id. When the session applied the id
 * already, nothing is written and the first call's answer is returned: found when the record is refused, and when
 * the write is refused with a `ConflictError` or `NotFoundError` the first call explains (it moved the session on, or
 * deleted what the call names: a precondition or an expected history no longer holds). The same id with other
 * arguments is `ConflictError` `REQUEST_ID_REUSED`. Without a request, `write` runs as it is: the ledger costs nothing.
 */
export function applyOnce<T>(ctx: EngineContext, ref: SessionRef, request: Request<T> | undefined, run: () => Promise<T>): Promise<T> {
  if (!request) return run();
  // Inside an atomic block, the ids it records are the block's once committed (see block-scope.ts).
  const write = () => committedNotes(ctx.events, run);
  // The first call's own promise when it writes (no extra await on the way: the hot path of a write with an id).
  return write().catch((error: unknown) => answerInstead(ctx, ref, request, write, error));
}

/** After `write` was refused: the first call's answer when the session applied the request, else the refusal. */
async function answerInstead<T>(
  ctx: EngineContext,
  ref: SessionRef,
  request: Request<T>,
  write: () => Promise<T>,
  error: unknown,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    if (!(error instanceof RequestTakenError) && !(error instanceof ConflictError) && !(error instanceof NotFoundError)) throw error;
    const recorded = await ctx.store.read((tx) => recordedAnswer(tx, ref, request));
    if (recorded) return recorded.value;
    // Not applied: the conflict is the call's own. A record that refused the call and is gone since cannot be (records
    // go with their session, which the read found): the call is made again rather than fail on the ledger's account.
    if (!(error instanceof RequestTakenError) || attempt > 0) throw error;
    try {
      return await write();
    } catch (again) {
      error = again;
    }
  }
}

/**
 * The answer the session recorded for `request`, if it applied its id: what a call that must not start twice (a move,
 * a tool call) looks up first, in its own unit. `REQUEST_ID_REUSED` when the id was applied with other arguments.
 */
export function* recordedAnswer<T>(tx: Tx, ref: SessionRef, request: Request<T>): Step<{ value: T } | undefined> {
  yield* ownedSession(tx, ref.id, ref.userId);
  return yield* recordedIn(tx, ref.id, request);
}

/** `recordedAnswer` for a session the unit has read already. */
export function* recordedIn<T>(tx: Tx, sessionId: string, request: Request<T>): Step<{ value: T } | undefined> {
  const row = yield* tx.getRequest(sessionId, request.id);
  if (!row) return undefined;
  const { written } = request;
  if (row.fingerprint !== request.fingerprint || (written && !(yield* written.same(tx, row.answer, written.args, row.checkpointId))))
    throw reusedError(request.id);
  const value = yield* request.answer.decode(tx, row.answer, row.checkpointId);
  if (request.sameAnswer && !(yield* request.sameAnswer(tx, value))) throw reusedError(request.id);
  return { value };
}

const reusedError = (id: string) =>
  new ConflictError(
    `request id ${JSON.stringify(id)} was applied to this session by a call with other arguments: nothing was written`,
    "REQUEST_ID_REUSED",
  );
