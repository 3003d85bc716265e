// What stands where a move's undos and replays write, made there by hand, that no checkpoint can keep: a symbolic link
// (see linked-writes.ts) or a hard link, changed since; what forkpoint does not capture (a pipe, a socket, a device, a
// file over the size limit or unreadable); a file the workspace's rules ignore now, changed since; a folder where a file
// was. A step would write over it unsaved, through it, or fail on it partway, so the move is refused before its first
// step, forced or not.
import { accessSync, constants, lstatSync, readFileSync, type BigIntStats } from "node:fs";
import { join } from "node:path";
import { ConflictError } from "../../models/errors.js";
import type { ToolInvocation } from "../../models/types.js";
import type { Step, Tx, WorkspaceRow } from "../../store/port/index.js";
import { diskFileId } from "../workspace/disk-file-id.js";
import { makeRules } from "../workspace/rules.js";
import { ignoreFactory } from "../workspace/state.js";
import { ignoredFile } from "../workspace/target-rules.js";
import { filesAt, TreeReader } from "../workspace/trees.js";
import { linkedWrite, stepWrites, type StepWrite } from "./linked-writes.js";

/** Why forkpoint cannot capture what `full` holds now (`maxBytes`: the largest file it stores), or undefined. */
function uncaptured(full: string, maxBytes: number): string | undefined {
  let st: BigIntStats | undefined;
  try {
    st = lstatSync(full, { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined; // a file on the way (ENOTDIR): nothing is there to lose
  }
  if (!st || st.isDirectory() || st.isSymbolicLink()) return undefined;
  if (!st.isFile()) return st.isFIFO() ? "a named pipe" : st.isSocket() ? "a socket" : "a device";
  if (st.size > BigInt(maxBytes)) return `a file of ${st.size} bytes, over the limit of ${maxBytes} forkpoint stores`;
  try {
    accessSync(full, constants.R_OK);
  } catch {
    return "a file forkpoint cannot read";
  }
  return undefined;
}

/** The first of `writes` whose path holds what forkpoint does not capture, in the order the steps run, as a reason. */
function uncapturedWrite(ws: WorkspaceRow, writes: readonly StepWrite[], maxBytes: number): string | undefined {
  for (const { path, call, undo } of writes) {
    const what = uncaptured(join(ws.dir, ...path.split("/")), maxBytes);
    if (what === undefined) continue;
    return (
      `cannot run this move's tools on the workspace ${ws.dir}: ${path} is ${what}, made there since forkpoint last ` +
      `captured it, and the ${undo ? "undo" : "replay"} of call ${call} writes it; no checkpoint can keep it (forcing ` +
      "would not save it): move it away, then move"
    );
  }
  return undefined;
}

const textOrNull = (full: string): string | null => {
  try {
    return readFileSync(full, "utf8");
  } catch {
    return null;
  }
};

/**
 * The first of `candidates` whose path holds a file other than forkpoint last saw there and than the step's call left
 * there: changed by hand since (unchanged, a step writes over nothing forkpoint cannot give back).
 */
function* changedSince(tx: Tx, ws: WorkspaceRow, candidates: readonly StepWrite[]): Step<StepWrite | undefined> {
  if (candidates.length === 0) return undefined;
  const reader = new TreeReader();
  const seen = yield* filesAt(tx, reader, yield* reader.rootOf(tx, ws.manifestId), new Set(candidates.map((w) => w.path)));
  for (const write of candidates) {
    const now = diskFileId(ws.dir, write.path);
    if (now === null || now === undefined || now === seen.get(write.path)) continue;
    if (now !== (yield* tx.callOutputs(write.call))?.get(write.path)) return write;
  }
  return undefined;
}

const stepText = (ws: WorkspaceRow, { path, call, undo }: StepWrite, what: string) =>
  `cannot run this move's tools on the workspace ${ws.dir}: ${path} ${what}, and the ${undo ? "undo" : "replay"} of ` +
  `call ${call} writes it`;

/**
 * A path the workspace's rules (its `exclude`, its .gitignore files) leave out now, changed since (see `changedSince`):
 * no checkpoint holds it.
 */
function* ignoredWrite(tx: Tx, ws: WorkspaceRow, writes: readonly StepWrite[]): Step<string | undefined> {
  const rules = makeRules(ws.dir, JSON.parse(ws.exclude) as string[], ws.gitignore, ignoreFactory, textOrNull);
  const found = yield* changedSince(
    tx,
    ws,
    writes.filter((w) => ignoredFile(rules, w.path)),
  );
  if (found === undefined) return undefined;
  return (
    stepText(ws, found, "is left out by its rules now (exclude or .gitignore) and changed since forkpoint last captured it") +
    "; no checkpoint can keep it (forcing would not save it): move it away, or stop leaving it out, then move"
  );
}

/**
 * A file with other hard links, changed since (see `changedSince`): a link made by hand, maybe to a file outside the
 * workspace, which a tool writing in place would change too (forkpoint's own restore replaces a file, never writes in it).
 */
function* hardLinkedWrite(tx: Tx, ws: WorkspaceRow, writes: readonly StepWrite[]): Step<string | undefined> {
  const linked = writes.filter((w) => {
    try {
      const st = lstatSync(join(ws.dir, ...w.path.split("/")), { throwIfNoEntry: false });
      return st !== undefined && st.isFile() && st.nlink > 1;
    } catch {
      return false;
    }
  });
  const found = yield* changedSince(tx, ws, linked);
  if (found === undefined) return undefined;
  return (
    stepText(
      ws,
      found,
      "has other hard links, and changed since forkpoint last captured it (a link made by hand, maybe to a file outside the workspace)",
    ) + " in place, through them; forkpoint never writes through a link made there by hand: put a plain copy there, then move"
  );
}

/**
 * A folder where forkpoint last saw a file that a step writes: made by hand since (a call that makes one records the
 * change), and a tool writing or removing that file fails on it, partway through the move.
 */
function* folderWrite(tx: Tx, ws: WorkspaceRow, writes: readonly StepWrite[]): Step<string | undefined> {
  const folders = writes.filter((w) => {
    try {
      return lstatSync(join(ws.dir, ...w.path.split("/")), { throwIfNoEntry: false })?.isDirectory() === true;
    } catch {
      return false;
    }
  });
  if (folders.length === 0) return undefined;
  const reader = new TreeReader();
  const seen = yield* filesAt(tx, reader, yield* reader.rootOf(tx, ws.manifestId), new Set(folders.map((w) => w.path)));
  const found = folders.find((w) => seen.has(w.path));
  return found && `${stepText(ws, found, "is a folder now, made since forkpoint last saw a file there")}: move it away, then move`;
}

/**
 * Why the undos of `undos` and the replays of `replays` may not run on workspace `ws` (see the file's comment), or
 * undefined. `maxBytes`: the largest file forkpoint stores (`limits.maxPayloadBytes`).
 */
export function* writesInTheWay(
  tx: Tx,
  ws: WorkspaceRow,
  undos: readonly ToolInvocation[],
  replays: readonly ToolInvocation[],
  maxBytes: number,
): Step<string | undefined> {
  if (undos.length + replays.length === 0) return undefined;
  const writes = yield* stepWrites(tx, undos, replays);
  return (
    linkedWrite(ws, writes) ??
    uncapturedWrite(ws, writes, maxBytes) ??
    (yield* ignoredWrite(tx, ws, writes)) ??
    (yield* hardLinkedWrite(tx, ws, writes)) ??
    (yield* folderWrite(tx, ws, writes))
  );
}

/** Refuses a move whose steps write where `writesInTheWay` finds something in the way, forced or not: `WORKSPACE_DRIFT`. */
export function* refuseWritesInTheWay(
  tx: Tx,
  ws: WorkspaceRow,
  undos: readonly ToolInvocation[],
  replays: readonly ToolInvocation[],
  maxBytes: number,
): Step<void> {
  const why = yield* writesInTheWay(tx, ws, undos, replays, maxBytes);
  if (why !== undefined) throw new ConflictError(why, "WORKSPACE_DRIFT");
}
