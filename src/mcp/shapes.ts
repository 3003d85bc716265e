// The engine's results as the MCP tools return them: plain JSON (ISO times, ids of tool calls) and one line of text each.
import type { Branch, Checkpoint, MoveResult, ToolInvocation } from "../index.js";
import type { CheckpointOut, MoveOut, ToolOutput } from "./schemas.js";
import { UNSAFE_TEXT } from "../models/unsafe-text.js";

export const checkpointOf = (c: Checkpoint): CheckpointOut => ({
  id: c.id,
  name: c.name,
  branchId: c.branchId,
  position: c.position,
  createdAt: c.createdAt.toISOString(),
});

export const branchOf = (b: Branch): MoveOut["branch"] => ({
  id: b.id,
  parentId: b.parentId,
  forkCheckpointId: b.forkCheckpointId,
  forkPosition: b.forkPosition,
  name: b.name,
  reason: b.reason,
  head: b.head,
  current: b.current,
  createdAt: b.createdAt.toISOString(),
});

/** A tool call as a line names it: `write_file tc_abc`. */
export const callOf = (t: ToolInvocation): string => `${t.tool} ${t.id}`;

export const moveOf = (r: MoveResult): MoveOut => ({
  branch: branchOf(r.branch),
  files: { written: r.files?.written ?? [], deleted: r.files?.deleted ?? [], kept: r.files?.kept ?? [] },
  savedDrift: r.savedDrift ?? null,
  tools: { undone: r.undone.map(callOf), replayed: r.replayed.map(callOf), skipped: r.skipped.map(callOf) },
});

/** A checkpoint as a line names it: `cp_abc "before the refactor"`. */
export const named = (c: { id: string; name: string | null }): string => (c.name ? `${c.id} ${JSON.stringify(c.name)}` : c.id);

const escaped = (c: string): string =>
  c === "\n" ? "\\n" : c === "\r" ? "\\r" : c === "\t" ? "\\t" : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/** `text` on one line: each character that would break it (or hide in it) written as its JSON escape. */
export const oneLine = (text: string): string => text.replace(UNSAFE_TEXT, escaped);

/** A file name as a line shows it: as is, or quoted as a JSON string when it holds such a character. */
export const shownPath = (path: string): string => (path.search(UNSAFE_TEXT) >= 0 ? `"${oneLine(path.replace(/["\\]/g, "\\$&"))}"` : path);

/** Up to `max` paths, then how many more: a line stays a line whatever the change. */
export function paths(list: readonly string[], max = 5): string {
  const shown = list.slice(0, max).map(shownPath).join(", ");
  return list.length > max ? `${shown}, and ${list.length - max} more` : shown;
}

/** `1 file`, `2 files`. */
export const countOf = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** What a move did to the files and the tool calls, as the tail of its line. */
export function moveTail(m: MoveOut): string {
  const parts = [`${countOf(m.files.written.length, "file")} written, ${m.files.deleted.length} deleted`];
  if (m.files.kept.length > 0)
    // Kept for several reasons (a change by hand found as it ran, or one an undo put back, a failed undo's file):
    // said as what the agent needs, not as one of them.
    parts.push(
      `${paths(m.files.kept)} kept as they are now, not as the checkpoint has them (changed by hand, or put back by ` +
        "an undo; not checkpointed: checkpoint {} keeps them)",
    );
  if (m.savedDrift) parts.push(`changed files first saved in checkpoint ${m.savedDrift.checkpointId} (${paths(m.savedDrift.files)})`);
  if (m.tools.undone.length > 0) parts.push(`undid ${paths(m.tools.undone)}`);
  if (m.tools.replayed.length > 0) parts.push(`replayed ${paths(m.tools.replayed)}`);
  if (m.tools.skipped.length > 0) parts.push(`irreversible, left as they are: ${paths(m.tools.skipped)}`);
  return parts.join("; ");
}

/** What a capture left out, as the tail of a line: `; not captured: big.bin (is 20000000 bytes, ...)` ("" when none). */
export function skippedTail(skipped: readonly { path: string; reason: string }[]): string {
  if (skipped.length === 0) return "";
  const shown = skipped.slice(0, 3).map((f) => `${shownPath(f.path)} (${oneLine(f.reason)})`);
  const more = skipped.length > 3 ? `, and ${skipped.length - 3} more` : "";
  return `; not captured, as forkpoint cannot store ${skipped.length === 1 ? "it" : "them"}: ${shown.join(", ")}${more}`;
}

export const where = (b: MoveOut["branch"]): string => `branch ${b.id} at position ${b.head}`;

export function diffLine(d: ToolOutput<"diff">): string {
  const side = (label: string, list: string[]) => `${list.length} ${label}${list.length > 0 ? ` (${paths(list)})` : ""}`;
  const changes = [side("added", d.added), side("modified", d.modified), side("deleted", d.deleted)].join(", ");
  return `${d.from} → ${d.to}: ${changes}${d.patchTruncated ? "; the patch is cut short" : ""}${skippedTail(d.skipped)}.`;
}
