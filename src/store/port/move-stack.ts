// A session's move stack (undo and redo) as both stores keep it on the session row: the newest standing move and the undone ones.
import type { MoveHistoryRow } from "./moves.js";

/** `top`: the newest standing move's ref (null: none); `redo`: undone moves' refs, the next to redo last. */
export interface MoveStack {
  top: string | null;
  redo: string[];
}

/**
 * The session row's `move_top` and `move_redo` once `move` is undone (it must be the top: the one below it becomes the
 * top) or redone (it must be the next to redo, from the top it was made on); undefined when it is not that move.
 */
export function stackAfter(
  stack: MoveStack,
  move: MoveHistoryRow | undefined,
  op: "undo" | "redo",
): { top: string | null; redo: string | null } | undefined {
  if (!move) return undefined;
  if (op === "undo") return stack.top === move.ref ? { top: move.prev, redo: JSON.stringify([...stack.redo, move.ref]) } : undefined;
  if (stack.redo[stack.redo.length - 1] !== move.ref || move.prev !== stack.top) return undefined;
  const rest = stack.redo.slice(0, -1);
  return { top: move.ref, redo: rest.length > 0 ? JSON.stringify(rest) : null };
}

/** The session row's `move_redo` for `redo`: null when nothing is to redo, as every write of it leaves it. */
export function redoColumn(redo: readonly string[]): string | null {
  return redo.length > 0 ? JSON.stringify(redo) : null;
}

/** True when two stacks name the same moves in the same places. */
export function sameStack(a: MoveStack, b: MoveStack): boolean {
  return a.top === b.top && a.redo.length === b.redo.length && a.redo.every((ref, i) => ref === b.redo[i]);
}
