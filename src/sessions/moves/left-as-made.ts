// A file the window of a move's undos changed outside the paths the undone calls' runs changed (a hand save, an undo
// writing past its call's files) is not the target's to overwrite: the files step leaves it as it is, as drift.
import type { Step, Tx } from "../../store/port/index.js";
import type { FileChange } from "../workspace/trees.js";

/**
 * The paths move `moveId`'s undos (those that ran) may have written: those their calls' runs changed, as recorded
 * then; undefined when a call has no such record (recorded with `recordToolCall`, or before paths were kept).
 */
export function* undonePaths(tx: Tx, moveId: string): Step<Set<string> | undefined> {
  const out = new Set<string>();
  for (const step of yield* tx.moveSteps(moveId)) {
    if (step.op !== "undo" || step.status === "pending") continue;
    const paths = yield* tx.callPaths(step.entryId);
    if (paths === undefined) return undefined;
    for (const path of paths) out.add(path);
  }
  return out;
}

/**
 * Those of a restore's `changes` that would replace a file as the move's steps left it (`made`: path to its content,
 * null when deleted) outside `undone`, the paths the undone calls may write: never captured, they stay as they are.
 */
export function leftAsMade(
  changes: readonly FileChange[],
  made: ReadonlyMap<string, string | null>,
  undone: ReadonlySet<string> | undefined,
): string[] {
  if (made.size === 0 || undone === undefined) return [];
  return changes.flatMap((c) => {
    const id = made.get(c.path);
    return id !== undefined && id !== null && c.from === id && !undone.has(c.path) ? [c.path] : [];
  });
}
