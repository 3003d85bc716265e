// edit: a new version of a message — a branch forked just before it, with the new message (and a checkpoint) written.
import type { BaseMoveSpec, MoveOutcome, WithinMove } from "./moves/move-spec.js";
import { ValidationError } from "../models/errors.js";
import { newId } from "../models/ids.js";
import {
  checkpointInput,
  editMessageInput,
  editOptions,
  messageInput,
  parseInput,
  type CheckpointInput,
  type EditOptions,
  parseOptions,
} from "../models/inputs.js";
import { readingInput, toJsonText } from "../models/json.js";
import type { Checkpoint, EditInput, EditResult } from "../models/types.js";
import type { CheckpointRow, EntryRow, SessionRow, Step, Tx } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { sessionMessage } from "./core/owned.js";
import { toCheckpoint } from "./core/rows.js";
import { entryAt } from "./log/lineage.js";
import { headOfEntry } from "./core/head.js";
import { writeCheckpoint, type CheckpointFields, type EntryFields } from "./log/writer.js";
import { forkedBranch } from "./log/forked-branch.js";
import { editPoint } from "./edit-point.js";
import { performMove } from "./moves/move.js";
import { jsonArgument } from "./requests/ledger.js";
import { sameEditRole } from "./requests/edit-role.js";
import { retainAfterWrite } from "./log/retention.js";
import { assertCapturable, captureFiles } from "./workspace/capture.js";

/** What the original message must be for the edit to go ahead (regenerate: an assistant's); throws otherwise. */
export type EditCheck = (original: EntryRow) => void;

export async function edit(
  ctx: EngineContext,
  ref: SessionRef,
  messageId: string,
  next: EditInput,
  options?: EditOptions,
  within?: WithinMove,
): Promise<EditResult> {
  return editWith(ctx, ref, messageId, editFields(ctx, parseEdit(next), "message"), options, within, undefined, "edit");
}

/**
 * The new message, validated. With a role it is exactly a message as `append` and `turn` take one, so it goes through
 * their schema, which a chat keeps warm (V8 optimizes each schema's checks apart, and edits are rare beside turns).
 */
function parseEdit(next: EditInput) {
  const role = readingInput(() => (typeof next === "object" && next !== null ? (next as { role?: unknown }).role : undefined), "message");
  return role === undefined ? parseInput(editMessageInput, next, "message") : parseInput(messageInput, next, "message");
}

/** A new message's entry fields (its role null when left out), validated before any write; `where` names the argument. */
export function editFields(
  ctx: EngineContext,
  m: { role?: string | undefined; content: unknown; clientId?: string | null | undefined; metadata?: object | null | undefined },
  where: string,
): EntryFields {
  return {
    kind: "message",
    role: m.role ?? null,
    content: toJsonText(m.content, `${where}.content`, ctx.limits),
    clientId: m.clientId ?? null,
    metadata: m.metadata == null ? null : toJsonText(m.metadata, `${where}.metadata`, ctx.limits),
  };
}

/** An edit of already validated fields; `check` may refuse the original message (in the move's transaction). */
export async function editWith(
  ctx: EngineContext,
  ref: SessionRef,
  messageId: string,
  fields: EntryFields,
  options?: EditOptions,
  within?: WithinMove,
  check?: EditCheck,
  verb = "edit",
): Promise<EditResult> {
  const parsed = options === undefined || options === null ? undefined : parseOptions(editOptions, options, "options");
  const { checkpoint, ...moveOptions } = parsed ?? {};
  const cpFields = checkpoint === undefined ? undefined : checkpointFields(ctx, checkpoint);
  const made: { checkpoint?: Checkpoint } = {};
  // The checkpoint is written in the transaction that writes the new message: the edit lands whole or not at all.
  const withCheckpoint: WithinMove | undefined = cpFields
    ? (tx, outcome) => checkpointWithin(ctx, tx, ref, outcome, cpFields, within, made)
    : within;
  const outcome = await performMove(
    ctx,
    ref,
    "edit",
    // No options (the usual call) leaves the move nothing to validate.
    parsed === undefined ? undefined : moveOptions,
    (tx, session) =>
      cpFields === undefined ? editSpec(tx, session, messageId, fields, check) : checkedEditSpec(tx, session, messageId, fields, check),
    withCheckpoint,
    // The same request id with another message, or another checkpoint with it, is another call. Built only for a
    // request's fingerprint: it parses the message's JSON again. The role is compared apart: left out, it is the
    // original's, so a retry that spells it out is the same call.
    {
      verb,
      get args() {
        const message = { ...fields, role: null, content: jsonArgument(fields.content), metadata: jsonArgument(fields.metadata) };
        return [messageId, message, cpArgs(cpFields)];
      },
      same: (tx, outcome) => sameEditRole(tx, outcome.message, messageId, fields.role),
    },
  );
  const written = made.checkpoint;
  if (written) ctx.events.emit("checkpoint", written);
  // An edit's outcome always carries its message (finishMoveTx writes it).
  return (written ? { ...outcome, checkpoint: written } : outcome) as EditResult;
}

/** The edit's move with a checkpoint: refused first where the workspace's files cannot be captured here. */
function* checkedEditSpec(
  tx: Tx,
  session: SessionRow,
  messageId: string,
  fields: EntryFields,
  check: EditCheck | undefined,
): Step<BaseMoveSpec> {
  yield* assertCapturable(tx, session, "edit");
  return yield* editSpec(tx, session, messageId, fields, check);
}

/** Writes the edit's checkpoint in the move's transaction, then what else the caller runs there. */
function* checkpointWithin(
  ctx: EngineContext,
  tx: Tx,
  ref: SessionRef,
  outcome: MoveOutcome,
  fields: EditCheckpointFields,
  within: WithinMove | undefined,
  made: { checkpoint?: Checkpoint },
): Step<void> {
  made.checkpoint = toCheckpoint(yield* checkpointAtMessage(ctx, tx, ref, outcome, fields));
  // Part of the edit's answer, which a request records after this.
  outcome.checkpoint = made.checkpoint;
  if (within) yield* within(tx, outcome);
}

/** An edit's checkpoint's fields, as its request's arguments have them. */
type EditCheckpointFields = CheckpointFields & { expiresAt: null };

/** A checkpoint's fields as a request's arguments: its metadata as a value (see `jsonArgument`). */
const cpArgs = (fields: CheckpointFields | undefined) => (fields ? { ...fields, metadata: jsonArgument(fields.metadata) } : null);

/** The checkpoint's fields, validated before anything is written. */
function checkpointFields(ctx: EngineContext, input: CheckpointInput): EditCheckpointFields {
  const o = parseInput(checkpointInput, input, "checkpoint");
  return {
    name: o.name ?? null,
    auto: false,
    metadata: o.metadata == null ? null : toJsonText(o.metadata, "checkpoint.metadata", ctx.limits),
    // Always null: kept in the request's arguments, whose fingerprint requests recorded before would no longer match.
    expiresAt: null,
    ...(o.expiresIn === undefined ? {} : { expiresIn: o.expiresIn }),
  };
}

function* checkpointAtMessage(
  ctx: EngineContext,
  tx: Tx,
  session: SessionRef,
  outcome: MoveOutcome,
  fields: EditCheckpointFields,
): Step<CheckpointRow> {
  const entry = (yield* tx.getEntry(outcome.message!.id))!;
  // Its expiry is counted from its createdAt (see `CheckpointFields.expiresIn`).
  const row = yield* writeCheckpoint(ctx, tx, session, entry.branchId, headOfEntry(entry), fields);
  yield* captureFiles(ctx, tx, session.id, row.id, "edit");
  yield* retainAfterWrite(tx, session, row, row.createdAt);
  return row;
}

/** An edit's move (its message already validated), read in the move's transaction. */
function* editSpec(tx: Tx, session: SessionRow, messageId: string, fields: EntryFields, check?: EditCheck): Step<BaseMoveSpec> {
  const { message: original, branch, base } = yield* sessionMessage(tx, session, messageId);
  check?.(original);
  // Just before the message, or before the calls it caused that were journaled before it (see `editPoint`), then the
  // messages written with it before it again.
  const { position: forkPosition, carried } = yield* editPoint(tx, branch, original);
  const forkEntry = (forkPosition === original.position - 1 ? base : undefined) ?? (yield* entryAt(tx, branch, forkPosition));
  return {
    kind: "edit",
    sessionId: session.id,
    userId: session.userId,
    target: { branchId: branch.id, position: forkPosition },
    newBranch: forkedBranch(session.id, { parentId: branch.id, position: forkPosition, entryId: forkEntry?.id ?? null }),
    // The role is the original's when the caller left it out.
    edit: {
      id: newId("msg"),
      fields: { ...fields, role: fields.role ?? original.role },
      base: headOfEntry(forkEntry),
      ...(carried.length === 0 ? {} : { carried: carried.map(carriedFields) }),
    },
  };
}

/** A message written again before an edit's new version, as it was. */
const carriedFields = (row: EntryRow): EntryFields => ({
  kind: "message",
  role: row.role,
  content: row.content,
  clientId: row.clientId,
  metadata: row.metadata,
});

/** Refuses a regenerate of a message that is not an assistant's answer. */
export const assistantOnly: EditCheck = (original) => {
  if (original.role !== "assistant")
    throw new ValidationError("messageId", `is a ${JSON.stringify(original.role)} message: only an assistant's answer is regenerated`);
};
