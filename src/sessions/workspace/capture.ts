// The workspace's files stored with a checkpoint that a move writes (an edit's): read in the transaction that writes it.
import type { Step, Tx } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { assertLocal } from "./host.js";
import { stateIn } from "./state.js";
import { captureNow } from "./workspace.js";

/**
 * Refuses, before a move starts, a checkpoint it would write for a session whose workspace is another host's (as
 * `checkpoint()` refuses): its files cannot be read here.
 */
export function* assertCapturable(tx: Tx, session: { id: string; hasWorkspace: boolean }, what: string): Step<void> {
  if (!session.hasWorkspace) return;
  const ws = yield* tx.getWorkspace(session.id);
  if (ws) assertLocal(ws, what);
}

/**
 * Stores the workspace's files (when the session has one) as checkpoint `checkpointId`'s, and as what forkpoint last
 * saw there, as `checkpoint()` does. They are read inside the transaction, not before it, because only then are they
 * the files the move left: after its restore (scope "both") and its tools' undo and replay.
 */
export function* captureFiles(ctx: EngineContext, tx: Tx, sessionId: string, checkpointId: string, what: string): Step<void> {
  const ws = yield* tx.getWorkspace(sessionId);
  if (!ws) return;
  assertLocal(ws, what);
  const manifestId = yield* captureNow(ctx, tx, yield* stateIn(ctx, tx, ws), ws);
  yield* tx.insertCheckpointFiles({ checkpointId, manifestId, dir: ws.dir, exclude: ws.exclude, gitignore: ws.gitignore });
  yield* tx.setWorkspaceManifest(sessionId, manifestId, ctx.now());
}
