// When a saver's mark says its rows were stored: by the seq of the session's newest checkpoint then, kept in the mark.
import type { Step, Tx } from "../../store/port/index.js";
import { RESUMED_ON } from "./resume-mark.js";

/**
 * The pending write channel of the mark on a task's results (`src/langgraph/written-on.ts` writes it). Like an
 * answer's mark (`RESUMED_ON`), it names the session's newest checkpoint when they were stored, and keeps its seq.
 */
export const WRITTEN_ON = "__forkpoint_written_on__";

/** The part of a mark this reads: the session's newest checkpoint when its rows were stored, and that one's seq. */
export interface StoredAfter {
  after?: string;
  seq?: number;
}

/**
 * When a mark's rows were stored, as the seq of the session's newest checkpoint then (`after`): its own while it is
 * there, else the seq the mark keeps (seqs only grow, and none is reused: the order holds once it is gone). -Infinity,
 * as if stored before any checkpoint, when it names none, or another session's, or one gone with no seq kept (a mark
 * kept before seqs were, or imported): such marks tell no order, and weigh as they always did.
 */
export function* markSeq(tx: Tx, sessionId: string, mark: StoredAfter): Step<number> {
  if (mark.after === undefined) return -Infinity;
  const after = yield* tx.getCheckpoint(mark.after);
  if (after) return after.sessionId === sessionId ? after.seq : -Infinity;
  return mark.seq ?? -Infinity;
}

/** A mark's fields as stored (`JSON`), when `channel` is a mark's that keeps a seq; else undefined. */
function markOf(channel: string, value: Buffer): (StoredAfter & Record<string, unknown>) | undefined {
  if (channel !== RESUMED_ON && channel !== WRITTEN_ON) return undefined;
  let mark: unknown;
  try {
    mark = JSON.parse(value.toString("utf8"));
  } catch {
    // Not a mark this wrote (a document edited by hand): stored as it is, as before seqs were kept.
    return undefined;
  }
  return mark !== null && typeof mark === "object" && !Array.isArray(mark) ? (mark as StoredAfter & Record<string, unknown>) : undefined;
}

/**
 * A pending write's value as an export gives it: a mark's without its seq, which orders it among this database's
 * checkpoints only (an import gives them new seqs). The mark then reads as one kept before seqs were.
 */
export function exportedWrite(channel: string, value: Buffer): Buffer {
  const mark = markOf(channel, value);
  if (!mark || !("seq" in mark)) return value;
  const { seq: _seq, ...rest } = mark;
  return Buffer.from(JSON.stringify(rest));
}

/**
 * A pending write's value as an import stores it (once the session's checkpoints are written): a mark naming a
 * checkpoint the database holds (the document's, or its root graph's session's imported before) keeps that one's new
 * seq, so the order holds should it be deleted later; one naming a checkpoint gone before the export (or a root's
 * not imported yet) keeps none, and weighs as a mark kept before seqs were.
 */
export function* importedWrite(tx: Tx, channel: string, value: Buffer): Step<Buffer> {
  const mark = markOf(channel, value);
  if (!mark) return value;
  const { seq: _seq, ...rest } = mark;
  const after = typeof mark.after === "string" ? yield* tx.getCheckpoint(mark.after) : undefined;
  const seq = after?.seq;
  if (seq === undefined && !("seq" in mark)) return value;
  return Buffer.from(JSON.stringify(seq === undefined ? rest : { ...rest, seq }));
}
