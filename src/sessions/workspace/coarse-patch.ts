// A unified diff found in linear time, for a change too long to diff line by line within a patch's bounds: the lines
// both texts share at their start and end stay context, everything between is one hunk, removed then added (as git
// gives up on a minimal diff past a cost, and still prints a correct one).

/** A text's lines, each with its own line break (the last may have none). */
function linesOf(text: string): string[] {
  const lines = text.split(/(?<=\n)/);
  return lines[lines.length - 1] === "" ? lines.slice(0, -1) : lines;
}

/** One line of a hunk: its mark and text, and git's marker after a last line with no line break. */
const hunkLine = (mark: string, line: string) =>
  line.endsWith("\n") ? `${mark}${line}` : `${mark}${line}\n\\ No newline at end of file\n`;

/** Where a hunk of `length` lines starting at 0-based line `at` starts, as a unified diff counts (0 for none). */
const start = (at: number, length: number) => (length === 0 ? at : at + 1);

/** The hunks of a change from `before` to `after` (both text), with `context` lines around, as `createTwoFilesPatch` writes hunks. */
export function coarseHunks(before: string, after: string, context = 3): string {
  const a = linesOf(before);
  const b = linesOf(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  if (head === a.length && head === b.length) return "";
  const from = Math.max(0, head - context);
  const trailing = Math.min(tail, context);
  const aEnd = a.length - tail + trailing;
  const bEnd = b.length - tail + trailing;
  const out = [`@@ -${start(from, aEnd - from)},${aEnd - from} +${start(from, bEnd - from)},${bEnd - from} @@\n`];
  for (let i = from; i < head; i++) out.push(hunkLine(" ", a[i]!));
  for (let i = head; i < a.length - tail; i++) out.push(hunkLine("-", a[i]!));
  for (let i = head; i < b.length - tail; i++) out.push(hunkLine("+", b[i]!));
  for (let i = a.length - tail; i < aEnd; i++) out.push(hunkLine(" ", a[i]!));
  return out.join("");
}
