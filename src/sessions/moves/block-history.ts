// A guarded block's own moves in the undo history: noted as they change it, taken back when the block fails.
import { sameStack, type MoveStack, type Step, type Tx } from "../../store/port/index.js";
import { inBlockOf, noteBlockStack, type StackChange } from "../core/block-scope.js";
import type { EngineContext } from "../core/context.js";

/** The move stack before a move changes it, when the move runs inside a block of this handle (else nothing is read). */
export function* stackBeforeMove(ctx: EngineContext, tx: Tx, sessionId: string): Step<MoveStack | undefined> {
  return inBlockOf(ctx.events) ? yield* tx.moveStack(sessionId) : undefined;
}

/** After the move, in its transaction: what it changed of the stack, noted in the blocks it runs inside. */
export function* noteStackChange(ctx: EngineContext, tx: Tx, sessionId: string, before: MoveStack | undefined): Step<void> {
  if (!before) return;
  const after = yield* tx.moveStack(sessionId);
  if (!sameStack(before, after)) noteBlockStack(ctx.events, { before, after });
}

/**
 * In a failed block's rollback: its own moves' changes to the stack taken back, newest first, so that its undos, redos
 * and moves are no steps of the history (the block is as if it never ran). A change the stack no longer ends with
 * stays: another opener's move made since stands on it, and stays undoable. One noted in a transaction that did not
 * commit (tried again, or refused) is not the stack's either: passed over.
 */
export function* takeBackBlockMoves(tx: Tx, sessionId: string, changes: readonly StackChange[] | undefined): Step<void> {
  for (let i = (changes?.length ?? 0) - 1; i >= 0; i--) {
    const { before, after } = changes![i]!;
    yield* tx.swapMoveStack(sessionId, after, before);
  }
}
