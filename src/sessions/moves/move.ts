// Moving the world: journal the steps, run each undo/replay once, then make the target current.
// Used by rollback, edit and switchBranch, and by crash recovery to finish a journaled move.
import { ConflictError, ToolReplayError, ToolUndoError, ValidationError, errorText } from "../../models/errors.js";
import { newId } from "../../models/ids.js";
import { moveOptions, parseInput, type MoveOptions } from "../../models/inputs.js";
import { resultAsJson } from "../../models/json.js";
import type { Branch, FailedStep, Message, MoveResult, ToolInvocation } from "../../models/types.js";
import type { BranchRow, MoveStepRow, SessionRow, Step, Tx } from "../../store/port/index.js";
import { runHandler } from "../../tools/run-handler.js";
import type { EngineContext, SessionRef } from "../core/context.js";
import { ownedCurrent, ownedSession } from "../core/owned.js";
import { toBranch, toMessage, toToolInvocation } from "../core/rows.js";
import { headOfEntry, type Head } from "../log/lineage.js";
import { autoCheckpointAfterMessage, writeEntry, type EntryFields } from "../log/writer.js";
import { prepareMoveRestore, reportSavedDrift } from "../workspace/force.js";
import { absorbChanges, endRestore, filesBefore, restoreFiles, targetFiles, workspaceOf } from "../workspace/workspace.js";
import { computePlan, type MoveTarget } from "./move-plan.js";

/** Everything needed to finish a move, persisted with its journal so a crash can be resumed. */
export interface MoveSpec {
  kind: "rollback" | "edit" | "switch";
  sessionId: string;
  userId: string;
  target: MoveTarget;
  /** The branch a rollback or edit creates once the world has moved (id chosen up front). */
  newBranch: BranchRow | null;
  /** The edited message, appended on the new branch after `base` (the fork entry's head; read again when absent). */
  edit: { id: string; fields: EntryFields; base?: Head } | null;
  onError: "stop" | "continue";
  skipped: string[];
  /** Calls left as they are because their tool is not registered (absent in journals written before it was kept). */
  unregistered?: string[];
  unknown: string[];
}

export type MoveOutcome = MoveResult & { message?: Message };

/** A move as rollback, edit and switch build it (the policies are added by `performMove`). */
export type BaseMoveSpec = Omit<MoveSpec, "onError" | "skipped" | "unregistered" | "unknown">;

/**
 * Runs in the transaction that finishes a move, after the session is on its target: what the caller writes there
 * lands with the move, with no other writer in between (ForkpointSaver's put after a fork). Throwing undoes the move
 * when no tool ran; after tools ran, the move still finishes without it, and the error is thrown after.
 */
export type WithinMove = (tx: Tx, outcome: MoveOutcome) => Step<void>;

const NOTHING_TO_MOVE = { steps: { undo: [], replay: [], skipped: [], unregistered: [], unknown: [] } } as const;

/** Moves currently executing in this process (recovery must not resume them). */
export const inflightMoves = new Set<string>();

export async function performMove(
  ctx: EngineContext,
  ref: SessionRef,
  verb: MoveSpec["kind"],
  options: MoveOptions | undefined,
  prepare: (tx: Tx, session: SessionRow) => Step<BaseMoveSpec>,
  within?: WithinMove,
): Promise<MoveOutcome> {
  // No options (the usual call) is the defaults: nothing to validate.
  const o: MoveOptions = options === undefined || options === null ? {} : parseInput(moveOptions, options, "options");
  const scope = o.scope ?? "conversation";
  if (o.force && scope === "conversation")
    throw new ValidationError("options.force", 'applies to the workspace: use scope "files" or "both"');
  return ctx.track(
    ctx.withSessionLock(
      ref.id,
      async () => {
        if (scope === "conversation") return moveConversation(ctx, ref, o, prepare, within);
        // Everything the files need is checked first (drift, contents, links in the way), so a refused move changes
        // nothing. Then the files are restored to the target's snapshot, then the conversation moves: tools replayed
        // after that snapshot bring their effects back on top of it, and tools undone find what they wrote.
        const { ws, manifestId, from, kind } = await ctx.store.read(function* (tx) {
          const { session, branch, head } = yield* ownedCurrent(tx, ref.id, ref.userId);
          const ws = yield* workspaceOf(tx, session.id, "options.scope");
          const base = yield* prepare(tx, session);
          if (scope === "files" && base.kind === "edit") {
            throw new ValidationError("options.scope", 'an edit adds a message: use scope "both" (or "conversation")');
          }
          // The conversation's refusals come before any file moves.
          if (scope === "both" && session.hasTools) refuseMove((yield* computePlan(ctx, tx, session, base.target)).steps, o);
          const manifestId = yield* targetFiles(tx, ws, base.target, base.newBranch?.forkCheckpointId ?? null);
          return { ws, manifestId, from: { fromBranchId: branch.id, fromHead: head.position }, kind: base.kind };
        });
        const { prepared, savedDrift } = await prepareMoveRestore(ctx, ref, ws, manifestId, o.force ? { move: kind } : null);
        const saved = savedDrift ? { savedDrift } : {};
        // Whatever fails from here on says where the drift was saved.
        const files = await reportSavedDrift(savedDrift, restoreFiles(ctx, ref.id, prepared, { scope, ...from }));
        if (scope === "files") return { ...(await reportSavedDrift(savedDrift, stayingPut(ctx, ref))), files, ...saved };
        // The journal stays until the conversation has moved (or the move failed, leaving the files restored, as before):
        // a crash in between is told apart by recovery from the session's current branch and head.
        try {
          return { ...(await reportSavedDrift(savedDrift, moveConversation(ctx, ref, o, prepare, within))), files, ...saved };
        } finally {
          await endRestore(ctx, ref.id);
        }
      },
      "exclusive",
      verb,
    ),
  );
}

/**
 * Refuses a move before anything moves: one that must undo or replay calls whose tool is not registered here (unless
 * told to leave them), or one that passes irreversible calls when told to refuse those.
 */
function refuseMove(
  plan: { readonly unregistered: readonly ToolInvocation[]; readonly skipped: readonly ToolInvocation[] },
  o: MoveOptions,
): void {
  const calls = (list: readonly ToolInvocation[]) => list.map((t) => `${t.tool} ${t.id}`).join(", ");
  if (plan.unregistered.length > 0 && o.unregistered !== "leave") {
    const tools = [...new Set(plan.unregistered.map((t) => JSON.stringify(t.tool)))].join(", ");
    throw new ConflictError(
      `the move must undo or replay ${plan.unregistered.length} call(s) of tool(s) not registered here with an undo: ${tools} ` +
        `(${calls(plan.unregistered)}); register them in openForkpoint({ tools }), or pass { unregistered: "leave" } to leave those calls as they are`,
      "TOOL_NOT_REGISTERED",
    );
  }
  if (o.refuseIrreversible && plan.skipped.length > 0) {
    throw new ConflictError(
      `the move passes ${plan.skipped.length} irreversible tool call(s) (${calls(plan.skipped)}) and refuseIrreversible is set`,
      "IRREVERSIBLE",
    );
  }
}

/** A files-only move: the conversation stays where it is. */
async function stayingPut(ctx: EngineContext, ref: SessionRef): Promise<MoveOutcome> {
  return ctx.store.read(function* (tx) {
    const { branch, head } = yield* ownedCurrent(tx, ref.id, ref.userId);
    return {
      branch: toBranch(branch, head.position, branch.id),
      undone: [],
      replayed: [],
      skipped: [],
      unregistered: [],
      failed: [],
      unknown: [],
    };
  });
}

/** The conversation part of a move (the caller holds the session's lock). */
async function moveConversation(
  ctx: EngineContext,
  ref: SessionRef,
  o: MoveOptions,
  prepare: (tx: Tx, session: SessionRow) => Step<BaseMoveSpec>,
  within?: WithinMove,
): Promise<MoveOutcome> {
  {
    // One write transaction plans the move and either finishes it (no tool has to run) or journals its steps,
    // so no other process can plan a move of this session in between.
    const planned = await ctx.store.write({ sessionId: ref.id }, function* (tx) {
      const session = yield* ownedSession(tx, ref.id, ref.userId);
      if (session.hasTools) yield* refuseConcurrentMove(ctx, tx, session.id);
      const base = yield* prepare(tx, session);
      // A session that never recorded a tool call has no world to move: skip reading the lineages.
      const computed = session.hasTools ? yield* computePlan(ctx, tx, session, base.target) : NOTHING_TO_MOVE;
      const plan = computed.steps;
      // Thrown in the planning transaction: nothing is written.
      refuseMove(plan, o);
      // `base` is this call's own fresh object: completed in place rather than copied.
      const spec: MoveSpec = Object.assign(base, {
        onError: o.onUndoError ?? "stop",
        skipped: plan.skipped.map((t) => t.id),
        unregistered: plan.unregistered.map((t) => t.id),
        unknown: plan.unknown.map((t) => t.id),
      });
      if (plan.undo.length + plan.replay.length === 0)
        return { spec, plan, done: yield* finishMoveTx(ctx, tx, spec, null, within), moveId: null };
      const moveId = newId("mv");
      yield* tx.insertMove({
        id: moveId,
        sessionId: session.id,
        kind: spec.kind,
        spec: JSON.stringify(spec),
        status: "running",
        ...ctx.ownership.self,
        leaseUntil: ctx.ownership.leaseUntil(ctx.now()),
        createdAt: ctx.now(),
        finishedAt: null,
      });
      // In the journaling transaction: another handle of this thread recovering next must not take it as a dead one's.
      inflightMoves.add(moveId);
      yield* tx.insertMoveSteps(
        [
          ...plan.undo.map((t) => ({ op: "undo" as const, entryId: t.id })),
          ...plan.replay.map((t) => ({ op: "replay" as const, entryId: t.id })),
        ].map((step, idx) => ({ moveId, idx, ...step, status: "pending" as const, result: null, error: null })),
      );
      return { spec, plan, done: null, moveId, hasWorkspace: session.hasWorkspace };
    });
    const { spec, done, moveId } = planned;
    if (done) {
      ctx.events.emit(spec.kind, done);
      return done;
    }
    // Tools undone or replayed change the workspace's files: forkpoint's own doing, not drift.
    let before: ReturnType<typeof filesBefore> | null;
    try {
      before = planned.hasWorkspace
        ? filesBefore(
            ctx,
            await ctx.store.read(function* (tx) {
              return yield* tx.getWorkspace(ref.id);
            }),
          )
        : null;
    } catch (error) {
      // Not run here after all: recovery (in this process too) finishes it.
      inflightMoves.delete(moveId);
      throw error;
    }
    try {
      return await runJournaledMove(ctx, moveId, spec, within);
    } finally {
      await absorbChanges(ctx, ref.id, before);
    }
  }
}

/**
 * Another process (or handle) is moving this session's world, or died doing it: moving it again now could compensate
 * twice, and a tool call journaled now would land on the branch being left, outside the move's plan.
 */
export function* refuseConcurrentMove(ctx: EngineContext, tx: Tx, sessionId: string): Step<void> {
  const running = yield* tx.runningMoves(sessionId);
  if (running.length === 0) return;
  throw new ConflictError(
    `a move of this session is under way (${running.map((m) => `${m.id}, process ${m.pid}`).join("; ")}); ` +
      "try again when it ends, or call fp.recover() if its process died",
    "MOVE_IN_PROGRESS",
  );
}

/** Runs the pending steps of a journaled move in order, then finishes it. Throws under the `stop` policy. */
export async function runJournaledMove(ctx: EngineContext, moveId: string, spec: MoveSpec, within?: WithinMove): Promise<MoveOutcome> {
  inflightMoves.add(moveId);
  try {
    const steps = await ctx.store.read(function* (tx) {
      return yield* tx.moveSteps(moveId);
    });
    for (const step of steps) {
      // A step that failed before a crash, under "stop": the process died before recording the stop it causes.
      if (step.status === "failed" && spec.onError === "stop")
        throw await stopMove(ctx, spec, moveId, step, await journaledFailure(ctx, step));
      if (step.status !== "pending") continue;
      const failure = await runStep(ctx, spec, step);
      // Closing stops a move as the stop policy does: no step starts after it, and calling the move again continues.
      if (failure && (spec.onError === "stop" || ctx.closing.aborted)) throw await stopMove(ctx, spec, moveId, step, failure);
    }
    return await finishMove(ctx, spec, moveId, within);
  } finally {
    inflightMoves.delete(moveId);
  }
}

/** Records that a move stopped at `step`, and returns the error naming it (what was undone or replayed before it). */
async function stopMove(
  ctx: EngineContext,
  spec: MoveSpec,
  moveId: string,
  step: MoveStepRow,
  failure: { tool: string; cause: unknown },
): Promise<Error> {
  const report = await ctx.store.write({ sessionId: spec.sessionId }, function* (tx) {
    yield* tx.finishMove(moveId, "failed", ctx.now());
    return yield* journalReport(ctx, tx, moveId);
  });
  const detail = { undone: report.undone, replayed: report.replayed, failed: report.failed };
  return step.op === "undo"
    ? new ToolUndoError(step.entryId, failure.tool, detail, failure.cause)
    : new ToolReplayError(step.entryId, failure.tool, detail, failure.cause);
}

/** A failed step's tool and error as its journal recorded them. */
async function journaledFailure(ctx: EngineContext, step: MoveStepRow): Promise<{ tool: string; cause: unknown }> {
  const message = (JSON.parse(step.error ?? "{}") as { message?: string }).message ?? "failed";
  return {
    tool: (
      await ctx.store.read(function* (tx) {
        return (yield* tx.getTool(step.entryId))!;
      })
    ).tool as string,
    cause: new Error(message),
  };
}

async function runStep(ctx: EngineContext, spec: MoveSpec, step: MoveStepRow): Promise<{ tool: string; cause: unknown } | null> {
  const row = await ctx.store.write({ sessionId: spec.sessionId }, function* (tx) {
    fenced(yield* tx.setMoveStep(ctx.ownership.self, step.moveId, step.idx, "running", null, null));
    return (yield* tx.getTool(step.entryId))!;
  });
  const invocation = toToolInvocation(row);
  let resultText: string | null = null;
  try {
    const tool = ctx.tools.get(invocation.tool);
    const undo = tool.undo;
    if (!undo)
      throw new ConflictError(
        `tool ${JSON.stringify(tool.name)} has no undo here: its call is neither undone nor replayed`,
        "TOOL_NOT_REGISTERED",
      );
    const call = {
      tool,
      step: step.op,
      sessionId: spec.sessionId,
      invocationId: row.id,
      mode: "move",
      during: spec.kind,
      closing: ctx.closing,
    } as const;
    const handlerCtx = (signal: AbortSignal) => ({
      sessionId: spec.sessionId,
      userId: spec.userId,
      invocationId: row.id,
      callId: invocation.callId,
      replay: step.op === "replay",
      signal,
    });
    // A timed-out handler is a failed step; whatever it returns later is not recorded.
    const renewal = renewWhileRunning(ctx, spec.sessionId, step.moveId);
    try {
      if (step.op === "undo") {
        const result = row.appliedResult === null ? invocation.result : (JSON.parse(row.appliedResult) as unknown);
        await runHandler(call, (signal) => undo({ args: invocation.args, result }, handlerCtx(signal)));
      } else {
        resultText = resultAsJson(await runHandler(call, (signal) => tool.run(invocation.args, handlerCtx(signal))), ctx.limits);
      }
    } finally {
      renewal.stop();
    }
  } catch (cause) {
    await ctx.store.write({ sessionId: spec.sessionId }, function* (tx) {
      fenced(
        yield* tx.setMoveStep(ctx.ownership.self, step.moveId, step.idx, "failed", null, JSON.stringify({ message: errorText(cause) })),
      );
    });
    return { tool: invocation.tool, cause };
  }
  await ctx.store.write({ sessionId: spec.sessionId }, function* (tx) {
    fenced(yield* tx.setMoveStep(ctx.ownership.self, step.moveId, step.idx, "done", resultText, null));
    if (step.op === "undo") yield* tx.unmarkApplied(row.id);
    else yield* tx.markApplied(row.id, spec.sessionId, resultText, ctx.now());
  });
  ctx.events.emit(step.op === "undo" ? "undo" : "replay", { ...invocation, applied: step.op === "replay" });
  return null;
}

/**
 * On stores whose owners hold leases, renews this move's lease while a step's handler runs (a slow undo keeps its move),
 * every third of the lease. A renewal that finds the move taken over stops renewing: the step's journal update is then
 * refused (`MOVE_TAKEN_OVER`).
 */
function renewWhileRunning(ctx: EngineContext, sessionId: string, moveId: string): { stop(): void } {
  const leaseMs = ctx.ownership.leaseMs;
  if (leaseMs === null) return { stop: () => undefined };
  let held = true;
  const timer = setInterval(
    () => {
      if (!held) return;
      ctx.store
        .write({ sessionId }, function* (tx) {
          return yield* tx.renewMove(moveId, ctx.ownership.self, ctx.now() + leaseMs);
        })
        .then(
          (still) => void (held = still),
          (error: unknown) => ctx.logger.warn(`forkpoint: renewing the lease of move ${moveId} failed`, error),
        );
    },
    Math.max(1, Math.floor(leaseMs / 3)),
  );
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** A journal update that wrote nothing: another owner took the move over (its lease ran out), so this one stops. */
function fenced(written: boolean): void {
  if (!written) throw new ConflictError("the move was taken over by another process while this one ran a step", "MOVE_TAKEN_OVER");
}

/** What the journal says a move did; runs inside a unit of work. */
function* journalReport(
  ctx: EngineContext,
  tx: Tx,
  moveId: string | null,
): Step<Pick<MoveResult, "undone" | "replayed" | "failed" | "unknown">> {
  const out = {
    undone: [] as ToolInvocation[],
    replayed: [] as ToolInvocation[],
    failed: [] as FailedStep[],
    unknown: [] as ToolInvocation[],
  };
  if (moveId === null) return out;
  for (const step of yield* tx.moveSteps(moveId)) {
    const invocation = toToolInvocation((yield* tx.getTool(step.entryId))!);
    if (step.status === "done") (step.op === "undo" ? out.undone : out.replayed).push(invocation);
    else if (step.status === "failed")
      out.failed.push({ invocation, step: step.op, error: (JSON.parse(step.error ?? "{}") as { message?: string }).message ?? "failed" });
    else if (step.status === "unknown") out.unknown.push(invocation);
  }
  return out;
}

/** Creates the new branch (and edited message), makes the target current, closes the journal: one transaction. */
async function finishMove(ctx: EngineContext, spec: MoveSpec, moveId: string | null, within?: WithinMove): Promise<MoveOutcome> {
  let outcome: MoveOutcome;
  try {
    outcome = await ctx.store.write({ sessionId: spec.sessionId }, function* (tx) {
      return yield* finishMoveTx(ctx, tx, spec, moveId, within);
    });
  } catch (error) {
    if (!within) throw error;
    // What the caller wanted written with the move was refused; the move's tools have run, so the move itself still
    // finishes (its journal closed, the session on its target), and then the caller hears why its part was not.
    ctx.events.emit(
      spec.kind,
      await ctx.store.write({ sessionId: spec.sessionId }, function* (tx) {
        return yield* finishMoveTx(ctx, tx, spec, moveId);
      }),
    );
    throw error;
  }
  ctx.events.emit(spec.kind, outcome);
  return outcome;
}

/** The body of `finishMove`, inside the caller's write transaction. */
function* finishMoveTx(ctx: EngineContext, tx: Tx, spec: MoveSpec, moveId: string | null, within?: WithinMove): Step<MoveOutcome> {
  const now = ctx.now();
  let branchRow = spec.newBranch ?? (yield* tx.getBranch(spec.target.branchId))!;
  let message: Message | undefined;
  // A new branch's head is its fork position (or the edited message); an existing one's is looked up.
  let head = spec.newBranch ? spec.newBranch.forkPosition : spec.target.position;
  if (spec.newBranch) {
    branchRow = spec.newBranch;
    branchRow.createdAt = now;
    yield* tx.insertBranch(branchRow);
    if (spec.edit) {
      const base = spec.edit.base ?? headOfEntry(branchRow.forkEntryId ? yield* tx.getEntry(branchRow.forkEntryId) : undefined);
      const row = yield* writeEntry(ctx, tx, branchRow.id, base, spec.edit.fields, spec.edit.id);
      message = toMessage(row);
      head = row.position;
      yield* autoCheckpointAfterMessage(ctx, tx, { id: spec.sessionId, userId: spec.userId }, row);
    }
  } else {
    yield* tx.insertEvent({
      sessionId: spec.sessionId,
      kind: "switch",
      refId: branchRow.id,
      branchId: branchRow.id,
      detail: `switched to branch ${branchRow.id}`,
      createdAt: now,
    });
  }
  yield* tx.setCurrentBranch(spec.sessionId, branchRow.id, now);
  if (moveId) yield* tx.finishMove(moveId, "done", now);
  const report = yield* journalReport(ctx, tx, moveId);
  const byIds = function* (ids: readonly string[]): Step<ToolInvocation[]> {
    const out: ToolInvocation[] = [];
    for (const id of ids) out.push(toToolInvocation((yield* tx.getTool(id))!));
    return out;
  };
  const branch: Branch = toBranch(branchRow, head, branchRow.id);
  const outcome: MoveOutcome = {
    branch,
    undone: report.undone,
    replayed: report.replayed,
    skipped: yield* byIds(spec.skipped),
    unregistered: yield* byIds(spec.unregistered ?? []),
    failed: report.failed,
    unknown: [...(yield* byIds(spec.unknown)), ...report.unknown],
    ...(message ? { message } : {}),
  };
  if (within) yield* within(tx, outcome);
  return outcome;
}
