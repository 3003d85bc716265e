// verify: recompute every hash chain, tool completion, state snapshot and checkpoint checksum (like `git fsck`), and
// each checkpoint's metadata index rows from its metadata.
// An operator call over one session or the whole database; it reports problems instead of stopping at the first.
import type { Tx } from "../store/port/index.js";
import { z } from "zod";
import { NotFoundError } from "../models/errors.js";
import { idSchema, parseOptions } from "../models/inputs.js";
import { longCallFields, type LongCallOptions } from "../models/progress.js";
import type { EngineContext } from "./core/context.js";
import { LongCall, runSlices } from "./maintenance/long-call.js";
import { sessionSlices, sessionWork, type SessionCheck, type SessionWork, type VerifyProblem } from "./maintenance/session-check.js";

/** What `verify` returns: `ok` when nothing is wrong. */
export interface VerifyReport {
  ok: boolean;
  /** Sessions checked. */
  sessions: number;
  problems: VerifyProblem[];
}

export const verifyInput = z.strictObject({ sessionId: idSchema.optional(), ...longCallFields });

/** Options of `verify`: one session (default: the whole database), and the long-call options. */
export type VerifyOptions = { sessionId?: string } & LongCallOptions;

/**
 * Progress is counted in log entries and checkpoints of the sessions in scope, as they are when the call starts;
 * each chunk of them is read in its own read transaction. Entries never change and a tool call's completion is
 * written once, so the chunks check one history: the one counted at the start (what is added later is not checked;
 * a session deleted meanwhile is skipped). An abort rejects with `AbortedError`; nothing is written either way.
 */
export async function verify(ctx: EngineContext, input: VerifyOptions = {}): Promise<VerifyReport> {
  const o = parseOptions(verifyInput, input, "options");
  const call = new LongCall(o);
  const work = await ctx.store.read((tx) => sessionWorkUnit(tx, o));
  call.start(work.reduce((n, w) => n + w.units, 0));
  const check: SessionCheck = { problems: [], snapshots: new Map(), metadataIndex: true };
  const slices = () => checkSlices(work, check);
  await runSlices(call, slices(), (fn) => ctx.store.read(fn));
  await ctx.store.read((tx) => orphansUnit(tx, o, check));
  call.finish();
  return { ok: check.problems.length === 0, sessions: work.length, problems: check.problems };
}

function* orphansUnit(tx: Tx, o: VerifyOptions, check: SessionCheck) {
  // Checkpoints are found through their owner and session: one whose owner or session was changed is an orphan.
  for (const id of yield* tx.orphanCheckpointIds(o.sessionId)) {
    check.problems.push({ kind: "checkpoint", id, detail: "checkpoint belongs to no session of its user" });
  }
}

function* checkSlices(work: SessionWork[], check: SessionCheck) {
  for (const w of work) yield* sessionSlices(w, check);
}

function* sessionWorkUnit(tx: Tx, o: VerifyOptions) {
  if (o.sessionId !== undefined && !(yield* tx.getSession(o.sessionId))) throw new NotFoundError("session", o.sessionId);
  const work: SessionWork[] = [];
  for (const id of o.sessionId !== undefined ? [o.sessionId] : yield* tx.allSessionIds()) work.push(yield* sessionWork(tx, id));
  return work;
}
