// The unified diff of a snapshot's changes, as git shows it: text files line by line, binary files named, changes of
// the executable bit as mode lines.
import { createRequire } from "node:module";
import { contentOf, gitMode, isExecutable } from "./file-id.js";

// Loaded on first use: only sessions with a workspace need it.
const load = createRequire(import.meta.url);
let diffModule: typeof import("diff") | undefined;
const textPatch = (from: string, to: string, before: string, after: string): string =>
  (diffModule ??= load("diff") as typeof import("diff")).createTwoFilesPatch(from, to, before, after, "", "", { context: 3 });

/** How a change of the executable bit shows in a patch, as git shows it ("" when the mode is the same). */
function modeLines(a: string | null, b: string | null): string {
  if (a === null) return b !== null && isExecutable(b) ? `new file mode ${gitMode(b)}\n` : "";
  if (b === null) return isExecutable(a) ? `deleted file mode ${gitMode(a)}\n` : "";
  return isExecutable(a) === isExecutable(b) ? "" : `old mode ${gitMode(a)}\nnew mode ${gitMode(b)}\n`;
}

/** A unified diff of `changes` (binary files are named, not shown; a change of mode is shown as git shows it). */
export function filesPatch(
  changes: readonly { path: string; from: string | null; to: string | null }[],
  content: (hash: string) => Buffer,
): string {
  let patch = "";
  for (const { path, from: a, to: b } of changes) {
    const before = a === null ? Buffer.alloc(0) : content(contentOf(a));
    const after = b === null ? Buffer.alloc(0) : content(contentOf(b));
    const from = a === null ? "/dev/null" : `a/${path}`;
    const to = b === null ? "/dev/null" : `b/${path}`;
    const modes = modeLines(a, b);
    if (before.includes(0) || after.includes(0)) patch += `${modes}Binary files ${from} and ${to} differ\n`;
    else {
      const text = textPatch(from, to, before.toString("utf8"), after.toString("utf8"));
      // After its "===" line, as git puts them after its "diff --git" line.
      const at = text.indexOf("\n") + 1;
      patch += text.slice(0, at) + modes + text.slice(at);
    }
  }
  return patch;
}
