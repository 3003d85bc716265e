// One spelling for an `exclude` list: lists that mean the same rules (other order, repeated patterns) compare equal,
// so attaching with them again is no change of rules (hand edits stay drift, earlier snapshots stay restorable).

/**
 * The canonical form of `patterns`: a repeated pattern kept only where it last appears (an earlier copy never decides:
 * the last matching pattern does), and each run of patterns of one kind (excluding, or re-including with `!`) sorted
 * (within a run the order cannot change which kind matches last). Runs keep their order: `["*.log", "!keep.log"]` and
 * `["!keep.log", "*.log"]` are other rules.
 */
export function canonicalExclude(patterns: readonly string[]): string[] {
  const last = patterns.filter((p, i) => patterns.lastIndexOf(p) === i);
  const out: string[] = [];
  let run: string[] = [];
  for (const p of last) {
    if (run.length > 0 && p.startsWith("!") !== run[0]!.startsWith("!")) (out.push(...run.sort()), (run = []));
    run.push(p);
  }
  return [...out, ...run.sort()];
}

/** Whether two stored `exclude` lists (JSON, as any version stored them) are the same rules. */
export function sameExclude(a: string, b: string): boolean {
  if (a === b) return true;
  const canonical = (s: string) => JSON.stringify(canonicalExclude(parsedList(s)));
  return canonical(a) === canonical(b);
}

/** A stored list, parsed; anything else is compared as written (its text alone). */
function parsedList(s: string): string[] {
  try {
    const v: unknown = JSON.parse(s);
    if (Array.isArray(v) && v.every((p) => typeof p === "string")) return v;
  } catch {
    // Not JSON: compared as written below.
  }
  return [`\0${s}`];
}
