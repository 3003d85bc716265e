// After a crash mid-move: finish journaled moves exactly once. A step that was running is reported unknown, never
// re-run (unless this process ran it to the end and only its record was lost with the connection).
import type { MoveSpec } from "./move-spec.js";
import { inflightMoves } from "../core/ownership.js";
import { servedHandler } from "../../tools/handler-scope.js";
import { callMayRun, inflightInvocations } from "../core/ownership.js";
import { completeStepUnit, failStepUnit, runJournaledMove } from "./run-steps.js";
import { forgetUnrecorded, unrecordedOutcome } from "./unrecorded-steps.js";
import type { MoveResult, ToolInvocation } from "../../models/types.js";
import type { MoveRow, Step, ToolRow, Tx } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { toToolInvocation } from "../core/rows.js";
import { isLocal } from "../workspace/host.js";
import { recoverWorkspaces, type WorkspaceRecovery } from "../workspace/recovery.js";

export interface RecoveryReport {
  /**
   * Moves finished now, with what each did (interrupted steps appear in `unknown`): by this call, or by another recovery
   * of this process under way when it met them (a lease's retry, another handle's, a plan's), which it waits for.
   */
  resumed: MoveResult[];
  /** Moves left for later: their process is alive, or a tool they need is not registered. */
  waiting: { moveId: string; reason: string }[];
  /**
   * Moves whose resumed steps failed again (their error): stopped there, as a move called stops, and reported by the
   * recovery that stopped them only (a later one does not list them). The same move called again continues it.
   */
  failed: { moveId: string; error: Error }[];
  /**
   * Tool calls that never completed: their process died while the tool ran, so whether the effect happened is
   * unknown (moves never undo or replay them). Only `fp.recover()` lists them (opening does not scan for them). A
   * call whose owner may still run it (a live process; on a shared database, a lease that holds) is not listed.
   * With them, the completed calls whose undo or replay a crash interrupted (a move reported the step `unknown`, at
   * open or in an earlier `recover()`), until `resolveToolCall` records what became of that step: whoever recovered
   * the move first, the truth is not lost to the next caller. Every report (the one at open too) lists the calls whose
   * step this recovery marked unknown, also when their move then stopped (in `failed`: its error lists them as well).
   */
  unknown: ToolInvocation[];
  /**
   * Workspace restores a crash interrupted (moves with scope "files" or "both"), finished first: each directory
   * then holds the move's target files, or is left as it is when someone changed it since ("drift").
   */
  workspaces: WorkspaceRecovery[];
}

/**
 * Takes the interrupted move over from its dead owner, in one transaction: its steps left running are marked unknown
 * (their calls added to `marked`) and this thread owns it. False when another recoverer (another process, or another
 * handle of this one) took it first: only one finishes it, and no step is run twice. A step this process ran to the end,
 * whose record its lost connection kept from being written, is recorded as it ended instead (only this process knows it).
 */
async function claim(ctx: EngineContext, move: MoveRow, marked: ToolInvocation[]): Promise<boolean> {
  let claimed: { landed: ToolInvocation[]; unknown: ToolInvocation[] } | null;
  try {
    claimed = await ctx.store.write({ sessionId: move.sessionId }, (tx) => claimUnit(tx, ctx, move));
  } catch (error) {
    inflightMoves.delete(move.id);
    throw error;
  }
  if (claimed === null) return false;
  marked.push(...claimed.unknown);
  forgetUnrecorded(move.id);
  for (const t of claimed.landed) ctx.events.emit(t.applied ? "replay" : "undo", t);
  return true;
}

/**
 * Claims the move (see `claim`): null when another recoverer has it, else the undos and replays recorded late and the
 * calls whose step it marked unknown.
 */
function* claimUnit(tx: Tx, ctx: EngineContext, move: MoveRow): Step<{ landed: ToolInvocation[]; unknown: ToolInvocation[] } | null> {
  const self = ctx.ownership.self;
  const leaseMs = ctx.ownership.leaseMs;
  if (inflightMoves.has(move.id) || !(yield* tx.claimMove(move.id, move, self, leaseMs))) return null;
  // Still this thread's when it was read, and claimed as read: no other server or process took it over meanwhile (one
  // that did marked its running steps unknown).
  const own = move.pid === self.pid && move.pidStart === self.pidStart;
  const landed: ToolInvocation[] = [];
  const unknown: ToolInvocation[] = [];
  for (const s of yield* tx.moveSteps(move.id)) {
    if (s.status !== "running") continue;
    const kept = own ? unrecordedOutcome(move.id, s.idx) : undefined;
    if (kept?.status === "done") {
      yield* completeStepUnit(tx, ctx, s, kept.result, JSON.parse(move.spec) as MoveSpec);
      landed.push(toToolInvocation((yield* tx.getTool(s.entryId))!));
    } else if (kept) yield* failStepUnit(tx, ctx, s, kept.error);
    else {
      yield* tx.setMoveStep(self, move.id, s.idx, "unknown", null, null, leaseMs);
      unknown.push(toToolInvocation((yield* tx.getTool(s.entryId))!));
    }
  }
  // In the claiming transaction: another handle of this thread reading the move next must see it is taken.
  inflightMoves.add(move.id);
  return { landed, unknown };
}

export async function recoverMoves(
  ctx: EngineContext,
  options: { listUnknown?: boolean; sessionId?: string } = {},
): Promise<RecoveryReport> {
  const report: RecoveryReport = { resumed: [], waiting: [], failed: [], unknown: [], workspaces: await recoverWorkspaces(ctx) };
  if (options.listUnknown) {
    // One snapshot: a call that completes or starts meanwhile is seen with its owner or not at all.
    const { running, owners, uncertain } = await ctx.store.read(runningCallsUnit);
    const live = new Set(owners.filter((o) => callMayRun(ctx.ownership, o)).map((o) => o.entryId));
    report.unknown = running.filter((t) => !live.has(t.id) && !inflightInvocations.has(t.id)).map(toToolInvocation);
    report.unknown.push(...uncertain.map(toToolInvocation));
  }
  const moves = await ctx.store.read((tx) => tx.runningMoves(options.sessionId));
  for (const move of moves) {
    // Closing: the rest wait for the next open.
    if (ctx.closing.aborted) break;
    // Finished by another recovery of this process now (a lease's retry, another handle's): its outcome is this one's,
    // unless this call comes from one of that move's handlers (it would wait on itself: left to that recovery).
    const elsewhere = recovering.get(move.id);
    if (elsewhere && servedHandler(move.sessionId)) continue;
    if (elsewhere) {
      addOutcome(report, move.id, await elsewhere);
      continue;
    }
    if (inflightMoves.has(move.id)) continue;
    if (ctx.ownership.mayRun(move)) {
      const owner = move.leaseHeld === null ? `process ${move.pid}` : `process ${move.pid} (${move.pidStart ?? "?"}), whose lease holds,`;
      report.waiting.push({ moveId: move.id, reason: `${owner} that started it is still running` });
      continue;
    }
    const spec = JSON.parse(move.spec) as MoveSpec;
    const { missing, filesElsewhere } = await ctx.store.read((tx) => missingHandlersUnit(tx, move, spec, ctx));
    if (filesElsewhere) {
      report.waiting.push({ moveId: move.id, reason: `it restores the workspace ${filesElsewhere}, on another host` });
      continue;
    }
    if (missing.length > 0) {
      report.waiting.push({
        moveId: move.id,
        reason: `tool(s) not registered here with an undo (TOOL_NOT_REGISTERED): ${[...new Set(missing)].join(", ")}`,
      });
      continue;
    }
    // Looked at again: another recovery of this process may have started it while the tools were read.
    const started = recovering.get(move.id);
    const outcome = started ?? resume(ctx, move, spec);
    if (!started) recovering.set(move.id, outcome);
    try {
      addOutcome(report, move.id, await outcome);
    } finally {
      if (!started) recovering.delete(move.id);
    }
  }
  return report;
}

/** What one recovery of a move came to: its result (null: another recoverer or its owner has it), or its error. */
interface Outcome {
  result?: MoveResult | null;
  error?: Error;
  /** The calls whose step this recovery marked unknown: reported whatever becomes of the move after (it may stop). */
  marked: ToolInvocation[];
}

/** The recoveries of this process under way, by move: another one meeting the move waits for it and reports the same. */
const recovering = new Map<string, Promise<Outcome>>();

/** Claims move `move` from its dead owner and runs the rest of it. */
async function resume(ctx: EngineContext, move: MoveRow, spec: MoveSpec): Promise<Outcome> {
  const marked: ToolInvocation[] = [];
  try {
    // Tracked as a move is: closing waits until the move has stopped (for `fp.recover()` too, which nothing else
    // waits for), each handler's outcome recorded, or the step closing cut short left running for the next recovery.
    const result = await ctx.track(
      ctx.withSessionLock(
        spec.sessionId,
        async () => {
          if (!(await claim(ctx, move, marked))) return null;
          return runJournaledMove(ctx, move.id, spec);
        },
        "exclusive",
        "recover",
      ),
    );
    return { result, marked };
  } catch (error) {
    return { error: error as Error, marked };
  }
}

function addOutcome(report: RecoveryReport, moveId: string, { result, error, marked }: Outcome): void {
  if (error) report.failed.push({ moveId, error });
  else if (result) report.resumed.push(result);
  else
    report.waiting.push({
      moveId,
      reason: "another recoverer (a process, or another handle of this one) is finishing it, or its owner renewed its lease",
    });
  for (const t of marked) if (!report.unknown.some((u) => u.id === t.id)) report.unknown.push(t);
}

function* runningCallsUnit(tx: Tx) {
  const running = yield* tx.runningTools();
  // A call whose undo or replay is unknown has completed: it is never among the running ones.
  const uncertain: ToolRow[] = [];
  for (const id of yield* tx.uncertainCalls()) {
    const row = yield* tx.getTool(id);
    if (row) uncertain.push(row);
  }
  return { running, owners: yield* tx.callOwners(), uncertain };
}

/** What this process lacks to finish the move: tools, or (a move that restores files) the workspace's host. */
function* missingHandlersUnit(tx: Tx, move: MoveRow, spec: MoveSpec, ctx: EngineContext) {
  const missing: string[] = [];
  for (const s of yield* tx.moveSteps(move.id)) {
    if (s.status !== "pending") continue;
    const name = (yield* tx.getTool(s.entryId))!.tool as string;
    if (!ctx.tools.isReversible(name)) missing.push(name);
  }
  const ws = spec.files ? yield* tx.getWorkspace(spec.sessionId) : undefined;
  return { missing, filesElsewhere: ws && !isLocal(ws) ? ws.dir : null };
}
