// A move resumed by recovery: what was put by hand where its steps still to run write, since the crash (or while its
// process ran it), is checked as the move checked its steps before the first one (see writes-in-the-way.ts).
import type { MoveStepRow, Step, Tx } from "../../store/port/index.js";
import type { ToolInvocation } from "../../models/types.js";
import type { EngineContext } from "../core/context.js";
import { toToolInvocation } from "../core/rows.js";
import { writesInTheWay } from "./writes-in-the-way.js";

/** Why the pending steps of `steps` may not run on session `sessionId`'s workspace, or undefined (no workspace too). */
export function* resumedInTheWay(ctx: EngineContext, tx: Tx, sessionId: string, steps: readonly MoveStepRow[]): Step<string | undefined> {
  const ws = yield* tx.getWorkspace(sessionId);
  if (!ws) return undefined;
  const undos: ToolInvocation[] = [];
  const replays: ToolInvocation[] = [];
  for (const step of steps) {
    if (step.status !== "pending") continue;
    const call = toToolInvocation((yield* tx.getTool(step.entryId))!);
    (step.op === "undo" ? undos : replays).push(call);
  }
  return yield* writesInTheWay(tx, ws, undos, replays, ctx.limits.maxPayloadBytes);
}
