// What stands where a move's undos and replays write, made there by hand, that no checkpoint can keep: a symbolic link
// (see linked-writes.ts) or a hard link, changed since; what forkpoint does not capture (a pipe, a socket, a device, a
// file over the size limit or unreadable); a file the workspace's rules ignore now, changed since; a folder where a file
// was. A step would write over it unsaved, through it, or fail on it partway, so the move is refused before its first
// step, forced or not.
import { accessSync, constants, lstatSync, type BigIntStats } from "node:fs";
import { join } from "node:path";
import { ConflictError } from "../../models/errors.js";
import type { ToolInvocation } from "../../models/types.js";
import type { Step, Tx, WorkspaceRow } from "../../store/port/index.js";
import { diskFileId } from "../workspace/disk-file-id.js";
import { ignoreFileText } from "../workspace/ignore-file.js";
import { makeRules } from "../workspace/rules.js";
import { ignoreFactory } from "../workspace/state.js";
import { ignoredFile } from "../workspace/target-rules.js";
import { filesAt, TreeReader } from "../workspace/trees.js";
import { linkedWrite, stepWrites, type StepWrite } from "./linked-writes.js";

/** What each path of `writes` holds now, as `lstat` says (undefined: nothing, or a file on the way): read once. */
function statsOf(ws: WorkspaceRow, writes: readonly StepWrite[]): Map<string, BigIntStats | undefined> {
  const out = new Map<string, BigIntStats | undefined>();
  for (const { path } of writes) {
    if (out.has(path)) continue;
    try {
      out.set(path, lstatSync(join(ws.dir, ...path.split("/")), { bigint: true, throwIfNoEntry: false }));
    } catch {
      out.set(path, undefined); // a file on the way (ENOTDIR): nothing is there to lose
    }
  }
  return out;
}

/** Why forkpoint cannot capture `st`, what `full` holds (`maxBytes`: the largest file it stores), or undefined. */
function uncaptured(full: string, st: BigIntStats | undefined, maxBytes: number): string | undefined {
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

const stepText = (ws: WorkspaceRow, { path, call, undo }: StepWrite, what: string) =>
  `cannot run this move's tools on the workspace ${ws.dir}: ${path} ${what}, and the ${undo ? "undo" : "replay"} of ` +
  `call ${call} writes it`;

/**
 * The first of `candidates` whose path holds a file other than forkpoint last saw there (`seen`) and than the step's
 * call left there: changed by hand since (unchanged, a step writes over nothing forkpoint cannot give back).
 */
function* changedSince(
  tx: Tx,
  ws: WorkspaceRow,
  candidates: readonly StepWrite[],
  seen: ReadonlyMap<string, string>,
): Step<StepWrite | undefined> {
  for (const write of candidates) {
    const now = diskFileId(ws.dir, write.path);
    if (now === null || now === undefined || now === seen.get(write.path)) continue;
    if (now !== (yield* tx.callOutputs(write.call))?.get(write.path)) return write;
  }
  return undefined;
}

/**
 * Why a step may not write where forkpoint cannot keep what is there (see the file's comment), in the order of the
 * checks, each over the steps in the order they run; undefined when nothing is in the way.
 */
function* uncapturedInTheWay(tx: Tx, ws: WorkspaceRow, writes: readonly StepWrite[], maxBytes: number): Step<string | undefined> {
  const stats = statsOf(ws, writes);
  for (const write of writes) {
    const what = uncaptured(join(ws.dir, ...write.path.split("/")), stats.get(write.path), maxBytes);
    if (what !== undefined)
      return `${stepText(ws, write, `is ${what}, made there since forkpoint last captured it`)}; no checkpoint can keep it (forcing would not save it): move it away, then move`;
  }
  const rules = makeRules(ws.dir, JSON.parse(ws.exclude) as string[], ws.gitignore, ignoreFactory, ignoreFileText);
  // Left out by the rules now; a file with other hard links (maybe to one outside, which a tool writing in place would
  // change too: forkpoint's own restore replaces a file); a folder (a call that makes one records the change).
  const ignored = writes.filter((w) => ignoredFile(rules, w.path));
  const linked = writes.filter((w) => stats.get(w.path)?.isFile() === true && stats.get(w.path)!.nlink > 1n);
  const folders = writes.filter((w) => stats.get(w.path)?.isDirectory() === true);
  const asked = new Set([...ignored, ...linked, ...folders].map((w) => w.path));
  if (asked.size === 0) return undefined;
  // What forkpoint last saw at those paths, read once.
  const reader = new TreeReader();
  const seen = yield* filesAt(tx, reader, yield* reader.rootOf(tx, ws.manifestId), asked);
  const changedIgnored = yield* changedSince(tx, ws, ignored, seen);
  if (changedIgnored)
    return (
      stepText(ws, changedIgnored, "is left out by its rules now (exclude or .gitignore) and changed since forkpoint last captured it") +
      "; no checkpoint can keep it (forcing would not save it): move it away, or stop leaving it out, then move"
    );
  const changedLinked = yield* changedSince(tx, ws, linked, seen);
  if (changedLinked)
    return (
      stepText(
        ws,
        changedLinked,
        "has other hard links, and changed since forkpoint last captured it (a link made by hand, maybe to a file outside the workspace)",
      ) + " in place, through them; forkpoint never writes through a link made there by hand: put a plain copy there, then move"
    );
  const folder = folders.find((w) => seen.has(w.path));
  return folder && `${stepText(ws, folder, "is a folder now, made since forkpoint last saw a file there")}: move it away, then move`;
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
  return linkedWrite(ws, writes) ?? (yield* uncapturedInTheWay(tx, ws, writes, maxBytes));
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
