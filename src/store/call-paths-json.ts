// How a call's recorded paths are kept in `call_paths.paths`: a JSON array of the sorted paths, then, when some held a
// hand edit as the call began, an object `{ "handEdited": [paths] }` (`[]` stays the text of a call that changed none).

/** The column's text for `paths`, and those of them that held a hand edit (`handEdited`). */
export function callPathsText(paths: readonly string[], handEdited: readonly string[] = []): string {
  const sorted: unknown[] = [...paths].sort();
  if (handEdited.length > 0) sorted.push({ handEdited: [...handEdited].sort() });
  return JSON.stringify(sorted);
}

/** The paths a column's text records. */
export function pathsOfText(text: string): string[] {
  return (JSON.parse(text) as unknown[]).filter((p): p is string => typeof p === "string");
}

/** The paths a column's text records as holding a hand edit when the call began. */
export function handEditedOfText(text: string): string[] {
  const tail = (JSON.parse(text) as unknown[]).find((p): p is { handEdited: string[] } => typeof p === "object" && p !== null);
  return tail?.handEdited ?? [];
}
