// recover: finishes moves and workspace restores a crash interrupted, and lists the calls it left running.
import type { EngineContext } from "./core/context.js";
import { recoverMoves, type RecoveryReport } from "./moves/recovery.js";

export function recover(ctx: EngineContext): Promise<RecoveryReport> {
  return recoverMoves(ctx, { listUnknown: true });
}
