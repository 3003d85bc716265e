// A move whose undos or replays write a path that is, or goes through, a symbolic link made by hand: the tool would
// write through it (a file outside the workspace, or another one in it), so the move is refused before its first step,
// forced or not. Links elsewhere in the workspace are left as they are: no step writes there.
import { lstatSync } from "node:fs";
import { join } from "node:path";
import type { ToolInvocation } from "../../models/types.js";
import type { Step, Tx, WorkspaceRow } from "../../store/port/index.js";
import { DRIFTED_ONLY } from "../workspace/named-files.js";

/** A path a step writes, and the step: the call, undone or replayed. */
export interface StepWrite {
  path: string;
  call: string;
  undo: boolean;
}

/**
 * The paths the undos and replays of `undos` and `replays` write, as their records say: those a call's run changed, and
 * the files a call recorded with `recordToolCall` found where its arguments name. Each was a file forkpoint captured
 * (or none, under plain folders) as the call ran, and forkpoint never captures through a link: a link on the way to it
 * now was made since. A call whose run changed no file names none here: its arguments may name a link the workspace
 * had all along, which it went through as it ran.
 */
export function* stepWrites(tx: Tx, undos: readonly ToolInvocation[], replays: readonly ToolInvocation[]): Step<StepWrite[]> {
  const out: StepWrite[] = [];
  const steps = [...undos.map((call) => ({ call, undo: true })), ...replays.map((call) => ({ call, undo: false }))];
  for (const { call, undo } of steps) {
    const paths = yield* tx.callPaths(call.id);
    const recorded = paths === undefined ? yield* tx.recordedFiles(call.id) : undefined;
    const files = paths ?? [...(recorded ?? [])].flatMap(([path, id]) => (id !== null && id !== DRIFTED_ONLY ? [path] : []));
    for (const path of files) out.push({ path, call: call.id, undo });
  }
  return out;
}

/** The first part of `path` under `dir` (itself too) that is a symbolic link now, relative to `dir` ("" for itself). */
function linkOnWay(dir: string, path: string, seen: Map<string, boolean>): string | undefined {
  const isLink = (rel: string) => {
    let link = seen.get(rel);
    if (link === undefined) {
      try {
        link = lstatSync(rel === "" ? dir : join(dir, rel), { throwIfNoEntry: false })?.isSymbolicLink() ?? false;
      } catch {
        link = false; // a file on the way (ENOTDIR): nothing is written through a link there
      }
      seen.set(rel, link);
    }
    return link;
  };
  if (isLink("")) return "";
  const parts = path.split("/");
  for (let i = 1; i <= parts.length; i++) {
    const rel = parts.slice(0, i).join("/");
    if (isLink(rel)) return rel;
  }
  return undefined;
}

/**
 * Why the steps writing `writes` (see `stepWrites`) may not run on workspace `ws` (see the file's comment), or
 * undefined: the first path one of them writes through a symbolic link, in the order they run.
 */
export function linkedWrite(ws: WorkspaceRow, writes: readonly StepWrite[]): string | undefined {
  const seen = new Map<string, boolean>();
  for (const { path, call, undo } of writes) {
    const link = linkOnWay(ws.dir, path, seen);
    if (link === undefined) continue;
    const what = link === "" ? `the workspace ${ws.dir} itself is a symbolic link` : `${link} is a symbolic link`;
    return (
      `cannot run this move's tools on the workspace ${ws.dir}: ${what}, and the ${undo ? "undo" : "replay"} of call ` +
      `${call} writes ${path} through it (a file outside the workspace, or another one in it, would change); ` +
      "forkpoint never writes through a link made there by hand: put back a file or folder there, or remove the link, then move"
    );
  }
  return undefined;
}
