// The unified diff of a snapshot's changes, as git shows it: text files line by line, binary files named, changes of
// the executable bit as mode lines.
import { isUtf8 } from "node:buffer";
import { createRequire } from "node:module";
import { coarseHunks } from "./coarse-patch.js";
import { gitMode, isExecutable } from "./file-id.js";

// Loaded on first use: only sessions with a workspace need it.
const load = createRequire(import.meta.url);
let diffModule: typeof import("diff") | undefined;

/** How a change of the executable bit shows in a patch, as git shows it ("" when the mode is the same). */
function modeLines(a: string | null, b: string | null): string {
  if (a === null) return b !== null && isExecutable(b) ? `new file mode ${gitMode(b)}\n` : "";
  if (b === null) return isExecutable(a) ? `deleted file mode ${gitMode(a)}\n` : "";
  return isExecutable(a) === isExecutable(b) ? "" : `old mode ${gitMode(a)}\nnew mode ${gitMode(b)}\n`;
}

/**
 * A line-by-line diff stops past this many lines added or removed: its cost grows with the square of that number (a
 * 10,000-line file rewritten took 20 s; 40,000 lines, minutes). Such a change is shown as one hunk (see coarse-patch.ts).
 */
const MAX_EDITS = 2_000;

/**
 * The unified diff of one change (a binary file is named, not shown; a change of mode is shown as git shows it). A
 * change of more lines added or removed than `MAX_EDITS`, or than a bound (`maxChars`) leaves room for (each takes at
 * least two characters, "+" or "-" and its line break), is shown as one hunk found in linear time, which the caller
 * cuts at the bound: a long file rewritten costs what the bound allows, and never the square of its length.
 */
export function changePatch(
  change: { path: string; from: string | null; to: string | null },
  before: Buffer,
  after: Buffer,
  maxChars = Infinity,
): string {
  const { path, from: a, to: b } = change;
  const from = a === null ? "/dev/null" : `a/${path}`;
  const to = b === null ? "/dev/null" : `b/${path}`;
  const modes = modeLines(a, b);
  // A text patch is text: a file that is not UTF-8 (Latin-1, say) would show U+FFFD where its bytes differ, and
  // such a patch would not apply. It is named as a binary file is.
  if (before.includes(0) || after.includes(0) || !isUtf8(before) || !isUtf8(after))
    return `${modes}Binary files ${from} and ${to} differ\n`;
  const options = { context: 3, maxEditLength: Math.min(Math.floor(maxChars / 2) + 1, MAX_EDITS) };
  diffModule ??= load("diff") as typeof import("diff");
  const [oldText, newText] = [before.toString("utf8"), after.toString("utf8")];
  const text: string =
    diffModule.createTwoFilesPatch(from, to, oldText, newText, "", "", options) ??
    diffModule.createTwoFilesPatch(from, to, "", "", "", "") + coarseHunks(oldText, newText);
  // After its "===" line, as git puts them after its "diff --git" line.
  const at = text.indexOf("\n") + 1;
  return text.slice(0, at) + modes + text.slice(at);
}

/** A patch built change by change, cut at `maxChars` characters: `truncated` once something was left out. */
export class BoundedPatch {
  text = "";
  truncated = false;
  constructor(readonly maxChars = Infinity) {}

  /** Adds one change's patch; false once the bound is reached (nothing more is added). */
  add(change: { path: string; from: string | null; to: string | null }, before: Buffer, after: Buffer): boolean {
    if (this.truncated) return false;
    const room = this.maxChars - this.text.length;
    const patch = changePatch(change, before, after, room);
    if (patch.length <= room) {
      this.text += patch;
      return true;
    }
    this.text += patch.slice(0, room);
    this.truncated = true;
    return false;
  }
}
