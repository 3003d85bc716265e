// Where a move may stop before a replay over what a recorded call's undo put back earlier in it: kept in no checkpoint,
// that content counts as changed while the move ran (see `unsavedIn`), and a replay that writes there, or may write
// anywhere (its call has no record of its files), stops the move first (see drift-in-move.ts and run-steps.ts).
import { lstatSync } from "node:fs";
import { join } from "node:path";
import type { MoveStepRow, Step, Tx } from "../../store/port/index.js";
import { toToolInvocation } from "../core/rows.js";
import { namedPaths, reaches } from "../workspace/named-paths.js";
import { undoReach } from "./recorded-over.js";

/** The paths a replay of `entryId` may write ("all": its call has no record), its arguments' too when it changed none. */
function* replayReach(tx: Tx, dir: string, entryId: string): Step<Set<string> | "all"> {
  const paths = yield* tx.callPaths(entryId);
  if (paths === undefined) return "all";
  const row = paths.length === 0 ? yield* tx.getTool(entryId) : undefined;
  return new Set([...paths, ...(row ? namedPaths(dir, toToolInvocation(row).args) : [])]);
}

/** Whether a file (not a folder) is at `path` under `dir`, not through a link. */
function fileAt(dir: string, path: string): boolean {
  try {
    return lstatSync(join(dir, ...path.split("/")), { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    return false;
  }
}

/**
 * Why a move whose steps are `steps` (in the order it runs them) may stop before one of its replays, as the paragraph
 * at the top says, one text per such replay; empty: none may. The paths weighed are the files a recorded call's undo
 * writes that held a file as it was recorded or hold one now (a name its arguments merely mention is none).
 */
export function* savedOverPlanned(tx: Tx, sessionId: string, steps: readonly Pick<MoveStepRow, "op" | "entryId">[]): Step<string[]> {
  const ws = yield* tx.getWorkspace(sessionId);
  if (!ws) return [];
  const by = new Map<string, string>();
  const out: string[] = [];
  for (const step of steps) {
    if (step.op === "replay" && by.size > 0) {
      const reach = yield* replayReach(tx, ws.dir, step.entryId);
      const paths = [...by.keys()].filter((p) => reach === "all" || reaches(reach, p));
      if (paths.length > 0) out.push(savedOverText(ws.dir, step.entryId, paths, [...new Set(paths.map((p) => by.get(p)!))]));
    }
    const reach = yield* undoReach(tx, sessionId, step);
    for (const path of reach.written) by.delete(path);
    for (const path of reach.named) {
      if (step.op === "replay") by.delete(path);
      else if (reach.left.get(path) != null || fileAt(ws.dir, path)) by.set(path, step.entryId);
    }
  }
  return out;
}

function savedOverText(dir: string, replay: string, paths: string[], calls: string[]): string {
  const one = paths.length === 1;
  return (
    `this move's undo of recorded ${calls.length === 1 ? "call" : "calls"} ${calls.join(", ")} writes ${paths.join(", ")} ` +
    `in the workspace ${dir}, and its replay of call ${replay} may write ${one ? "it" : "them"} next; what that undo puts ` +
    "back is its tool's own, which forkpoint cannot tell before it runs: kept in no checkpoint, it counts as changed " +
    "while the move ran, and the move stops before that replay (WORKSPACE_DRIFT), forced or not, with it on disk: take a " +
    "checkpoint to keep it, then move again"
  );
}
