// plan_rollback's line on the files changed since the last checkpoint: which of them the rollback refuses, and why.
import type { RestoreCheck } from "../sessions/workspace/prepare-restore.js";
import { countOf, paths } from "./shapes.js";

/**
 * The files changed since the last checkpoint on the branch, and which of them the rollback refuses: only those changed
 * by hand since forkpoint last saw them (drift); the others a move or another checkpoint wrote, which it takes as saved.
 */
export function changedLine(changed: string[], check: RestoreCheck | null, drifts: boolean, blocked: boolean): string {
  const head = `${countOf(changed.length, "file")} changed since the last checkpoint on this branch (${paths(changed)})`;
  if (blocked) return head;
  if (!check) return drifts ? `${head}: refused (WORKSPACE_DRIFT) unless force: true, which saves them in a checkpoint first` : head;
  if (changed.every((p) => check.leftAlone.includes(p)))
    return `${head}: left as they are, as the checkpoint's .gitignore files ignore them`;
  const hand = check.drifted;
  const saved = changed.filter((p) => !hand.includes(p) && !check.leftAlone.includes(p));
  const parts = [head];
  if (hand.length > 0)
    parts.push(
      `changed by hand since forkpoint last saw ${hand.length === 1 ? "it" : "them"}: ${paths(hand)}, refused (WORKSPACE_DRIFT) ` +
        "unless force: true, which saves them in a checkpoint first",
    );
  if (saved.length > 0)
    parts.push(
      `${paths(saved)} ${saved.length === 1 ? "is" : "are"} as forkpoint last wrote or saw ${saved.length === 1 ? "it" : "them"} ` +
        "(a move, or a checkpoint on another branch, keeps that content): no refusal for " +
        (saved.length === 1 ? "it" : "them"),
    );
  return parts.join("; ");
}
