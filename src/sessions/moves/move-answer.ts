// A move's answer as the request ledger keeps it: by the ids it names (entries and branches never change).
import type { FailedStep, ToolInvocation } from "../../models/types.js";
import type { Step, Tx } from "../../store/port/index.js";
import { toBranch, toMessage, toToolInvocation } from "../core/rows.js";
import { checkpointJson, type CheckpointJson } from "../requests/answers.js";
import type { AnswerCodec } from "../requests/ledger.js";
import type { MoveOutcome } from "./move-spec.js";

/**
 * A move's answer as kept: the branch it left current, its head and name, the invocations by id (with those applied
 * then, `a`, and those still running then, `w`), the rest as returned. `n`, `a` and `w` are absent from records kept
 * before they were: those answer with the branch's name and the invocations as they are now.
 */
interface MoveRecord {
  b: string;
  h: number;
  n?: string | null;
  a?: string[];
  w?: string[];
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

/** The invocations a move's answer names, each once. */
function named(o: MoveOutcome): ToolInvocation[] {
  const all = [...o.undone, ...o.replayed, ...o.skipped, ...o.unregistered, ...o.unknown, ...o.failed.map((f) => f.invocation)];
  return [...new Map(all.map((t) => [t.id, t])).values()];
}

/**
 * What a move (rollback, switch, undo, redo, edit, regenerate) returned, as the ledger keeps it: ids where the rows
 * never change (entries, branches), read back for a retry; a checkpoint whole. An invocation read back is as it is
 * now (whether it is applied); the branch is reported current, as the first call reported it.
 */
export const moveAnswer: AnswerCodec<MoveOutcome> = {
  encode(o) {
    const invocations = named(o);
    const record: MoveRecord = {
      b: o.branch.id,
      h: o.branch.head,
      n: o.branch.name,
      a: ids(invocations.filter((t) => t.applied)),
      w: ids(invocations.filter((t) => t.status === "running")),
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
    const branch = toBranch((yield* tx.getBranch(r.b))!, r.h, r.b);
    if (r.n !== undefined) branch.name = r.n;
    const then = asThen(r);
    const outcome: MoveOutcome = {
      branch,
      undone: yield* invocations(tx, r.u, then),
      replayed: yield* invocations(tx, r.p, then),
      skipped: yield* invocations(tx, r.s, then),
      unregistered: yield* invocations(tx, r.r, then),
      failed: [],
      unknown: yield* invocations(tx, r.k, then),
    };
    for (const [id, step, error] of r.f) outcome.failed.push({ invocation: (yield* invocations(tx, [id], then))[0]!, step, error });
    if (r.m !== undefined) outcome.message = toMessage((yield* tx.getEntry(r.m))!);
    if (r.c) outcome.checkpoint = checkpointJson.decode(r.c);
    return r.x ? { ...outcome, ...r.x } : outcome;
  },
};

/** An invocation as it was when the move answered: applied or not, and without the outcome a running call got since. */
type AsThen = (invocation: ToolInvocation) => ToolInvocation;

function asThen(r: MoveRecord): AsThen {
  if (r.a === undefined) return (t) => t;
  const applied = new Set(r.a);
  const running = new Set(r.w ?? []);
  return (t) => {
    const was = { ...t, applied: applied.has(t.id) };
    return running.has(t.id) ? { ...was, status: "running", result: null, error: null, completedAt: null } : was;
  };
}

function* invocations(tx: Tx, list: readonly string[], then: AsThen): Step<ToolInvocation[]> {
  const out: ToolInvocation[] = [];
  for (const id of list) out.push(then(toToolInvocation((yield* tx.getTool(id))!)));
  return out;
}
