// Answers the request ledger keeps small: messages by where they are, a checkpoint whole (it may be deleted later).
import type { Checkpoint, Message, Turn } from "../../models/types.js";
import type { KeptTurnAnswer, MessageRow, Step, Tx } from "../../store/port/index.js";
import { toCheckpoint, toMessage } from "../core/rows.js";
import type { EntryFields } from "../log/writer.js";
import { sameJsonText, type AnswerCodec } from "./ledger.js";

/** A checkpoint as JSON keeps it: its times as numbers. */
export type CheckpointJson = Omit<Checkpoint, "createdAt" | "expiresAt"> & { createdAt: number; expiresAt: number | null };

/** A checkpoint as JSON (times as numbers), and back. */
export const checkpointJson = {
  encode: (cp: Checkpoint): CheckpointJson => ({ ...cp, createdAt: cp.createdAt.getTime(), expiresAt: cp.expiresAt?.getTime() ?? null }),
  decode: (cp: CheckpointJson): Checkpoint => ({
    ...cp,
    createdAt: new Date(cp.createdAt),
    expiresAt: cp.expiresAt === null ? null : new Date(cp.expiresAt),
  }),
};

/**
 * Messages one call wrote, as the request ledger keeps them: their branch, first position and count (they are
 * consecutive entries of one branch, and entries never change), read back whole for a retry.
 */
export const messagesAnswer: AnswerCodec<Message[]> = {
  encode: (messages) => JSON.stringify(messagesRange(messages)),
  *decode(tx: Tx, answer: string): Step<Message[]> {
    return yield* messagesIn(tx, JSON.parse(answer) as MessagesRange, toMessage);
  },
};

/** Where a call's messages are: their branch, first position and count (`[]`: none). */
export type MessagesRange = [] | [branchId: string, first: number, count: number];

export const messagesRange = (messages: readonly Message[]): MessagesRange =>
  messages.length === 0 ? [] : [messages[0]!.branchId, messages[0]!.position, messages.length];

/** The messages of `range`, each made by `map`. */
export function* messagesIn<T>(tx: Tx, range: MessagesRange, map: (row: MessageRow) => T): Step<T[]> {
  const out: T[] = [];
  if (range.length === 3) yield* tx.segmentMessages({ branchId: range[0], after: range[1] - 1, upTo: range[1] + range[2] - 1 }, map, out);
  return out;
}

/** Whether the messages of `range` are `fields` as written: the same roles, contents, client ids and metadata. */
export function* wroteMessages(tx: Tx, range: MessagesRange, fields: readonly EntryFields[]): Step<boolean> {
  if ((range[2] ?? 0) !== fields.length) return false;
  // `map` gets one reused row object: what is compared is copied out of it.
  const rows = yield* messagesIn(tx, range, (r) => [r.role, r.content, r.clientId, r.metadata]);
  return (
    rows.length === fields.length &&
    rows.every(([role, content, clientId, metadata], i) => {
      const f = fields[i]!;
      return (
        role === f.role &&
        clientId === (f.clientId ?? null) &&
        sameJsonText(content as string, f.content) &&
        sameJsonText(metadata, f.metadata)
      );
    })
  );
}

/**
 * A turn's answer as the ledger's table keeps it: where its messages are, its checkpoint whole, and the `expiresIn` it
 * was asked for. Earlier versions wrote it so; a store writes it so when it deletes a checkpoint that kept a request.
 */
export type TurnRecord = KeptTurnAnswer;

/**
 * A turn as the request ledger keeps it: its messages as `append`'s are (where they are), its checkpoint whole (small,
 * and the checkpoint may be deleted or expire before a retry), in one flat array. A turn written now keeps it on its
 * checkpoint's row instead (`turnRowAnswer`); this encoding is the table's.
 */
export const turnAnswer: AnswerCodec<Turn & { expiresIn?: number | null }> = {
  encode: ({ messages, checkpoint: c, expiresIn }) => {
    const cp: TurnRecord[1] = [
      c.id,
      c.sessionId,
      c.branchId,
      c.position,
      c.name,
      c.auto,
      c.metadata,
      c.userId,
      c.checksum,
      c.createdAt.getTime(),
      c.expiresAt?.getTime() ?? null,
    ];
    return JSON.stringify([messagesRange(messages), cp, expiresIn ?? null] satisfies TurnRecord);
  },
  *decode(tx, answer, checkpointId) {
    const { messages, checkpoint } = yield* readTurn(tx, answer, checkpointId);
    return { messages: yield* messagesIn(tx, messages, toMessage), checkpoint };
  },
};

/**
 * A turn's answer as its checkpoint's row keeps it (the rest of it is that row): where its messages begin on the
 * checkpoint's branch, how many, and the `expiresIn` it was asked for.
 */
export type TurnRowRecord = [first: number, count: number, expiresIn: number | null];

/** The answer a turn's checkpoint row keeps for `messages` and `expiresIn`. */
export const turnRowAnswer = (messages: readonly Message[], expiresIn: number | null): string =>
  JSON.stringify([messages[0]?.position ?? 0, messages.length, expiresIn] satisfies TurnRowRecord);

/**
 * A recorded turn, whichever way it was kept: on the row of checkpoint `checkpointId` (given), or whole in the ledger's
 * table (`TurnRecord`): its checkpoint, where its messages are, and the `expiresIn` it was asked for.
 */
export function* readTurn(
  tx: Tx,
  answer: string,
  checkpointId: string | null | undefined,
): Step<{ checkpoint: Checkpoint; messages: MessagesRange; expiresIn: number | null }> {
  if (checkpointId != null) {
    const [first, count, expiresIn] = JSON.parse(answer) as TurnRowRecord;
    // The row was found by the request in this same unit: it is there.
    const row = (yield* tx.getCheckpoint(checkpointId))!;
    return { checkpoint: toCheckpoint(row), messages: count === 0 ? [] : [row.branchId, first, count], expiresIn };
  }
  const [messages, c, expiresIn] = JSON.parse(answer) as TurnRecord;
  const checkpoint: Checkpoint = {
    id: c[0],
    sessionId: c[1],
    branchId: c[2],
    position: c[3],
    name: c[4],
    auto: c[5],
    metadata: c[6] as Checkpoint["metadata"],
    userId: c[7],
    checksum: c[8],
    createdAt: new Date(c[9]),
    expiresAt: c[10] === null ? null : new Date(c[10]),
  };
  return { checkpoint, messages, expiresIn };
}
