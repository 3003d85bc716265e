// Answers the request ledger keeps small: a checkpoint whole (it may be deleted later), a move by the ids it names.
import type { Checkpoint, FailedStep, ToolInvocation } from "../../models/types.js";
import type { Step, Tx } from "../../store/port/index.js";
import { toBranch, toMessage, toToolInvocation } from "../core/rows.js";
import type { MoveOutcome } from "../moves/move-spec.js";
import type { AnswerCodec } from "./ledger.js";

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

/** A move's answer as kept: the branch it left current and its head, the invocations by id, the rest as returned. */
interface MoveRecord {
  b: string;
  h: number;
  u: string[];
  p: string[];
  s: string[];
  r: string[];
  f: [string, FailedStep["step"], string][];
  k: string[];
  m?: string;
  c?: CheckpointJson;
  x?: Pick<MoveOutcome, "files" | "savedDrift">;
}

const ids = (list: readonly ToolInvocation[]) => list.map((t) => t.id);

/**
 * What a move (rollback, switch, undo, redo, edit, regenerate) returned, as the ledger keeps it: ids where the rows
 * never change (entries, branches), read back for a retry; a checkpoint whole. An invocation read back is as it is
 * now (whether it is applied); the branch is reported current, as the first call reported it.
 */
export const moveAnswer: AnswerCodec<MoveOutcome> = {
  encode(o) {
    const record: MoveRecord = {
      b: o.branch.id,
      h: o.branch.head,
      u: ids(o.undone),
      p: ids(o.replayed),
      s: ids(o.skipped),
      r: ids(o.unregistered),
      f: o.failed.map((f) => [f.invocation.id, f.step, f.error]),
      k: ids(o.unknown),
    };
    if (o.message) record.m = o.message.id;
    if (o.checkpoint) record.c = checkpointJson.encode(o.checkpoint);
    if (o.files || o.savedDrift)
      record.x = { ...(o.files ? { files: o.files } : {}), ...(o.savedDrift ? { savedDrift: o.savedDrift } : {}) };
    return JSON.stringify(record);
  },
  *decode(tx, answer) {
    const r = JSON.parse(answer) as MoveRecord;
    const outcome: MoveOutcome = {
      branch: toBranch((yield* tx.getBranch(r.b))!, r.h, r.b),
      undone: yield* invocations(tx, r.u),
      replayed: yield* invocations(tx, r.p),
      skipped: yield* invocations(tx, r.s),
      unregistered: yield* invocations(tx, r.r),
      failed: [],
      unknown: yield* invocations(tx, r.k),
    };
    for (const [id, step, error] of r.f) outcome.failed.push({ invocation: (yield* invocations(tx, [id]))[0]!, step, error });
    if (r.m !== undefined) outcome.message = toMessage((yield* tx.getEntry(r.m))!);
    if (r.c) outcome.checkpoint = checkpointJson.decode(r.c);
    return r.x ? { ...outcome, ...r.x } : outcome;
  },
};

function* invocations(tx: Tx, list: readonly string[]): Step<ToolInvocation[]> {
  const out: ToolInvocation[] = [];
  for (const id of list) out.push(toToolInvocation((yield* tx.getTool(id))!));
  return out;
}
