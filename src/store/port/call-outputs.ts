// How both stores write and read what a call's run is known to have left (`call_paths.outputs`: JSON `{ path: file id |
// null }`), the paths that held a hand edit as it began (`call_paths.hand_edited`: a JSON array) and what the run found
// and left in those (`call_paths.hand_edit_ids`: JSON `{ path: [found, left] }`).
import type { CallOutputs, HandEditIds } from "./calls.js";

/** The stored text of `outputs`: null when none were given (not recorded) or none are known. */
export function outputsJson(outputs: CallOutputs | undefined): string | null {
  if (outputs === undefined || outputs.size === 0) return null;
  return JSON.stringify(Object.fromEntries([...outputs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

/** A call's outputs from their stored text (null or missing: not recorded). */
export function outputsOf(text: string | null | undefined): CallOutputs | undefined {
  if (text === null || text === undefined) return undefined;
  return new Map(Object.entries(JSON.parse(text) as Record<string, string | null>));
}

/** The stored text of `handEdited`: null when none. */
export function handEditedJson(paths: readonly string[] | undefined): string | null {
  return paths === undefined || paths.length === 0 ? null : JSON.stringify([...paths].sort());
}

/** The paths recorded as holding a hand edit (null or missing: none). */
export function handEditedOf(text: string | null | undefined): string[] {
  return text === null || text === undefined ? [] : (JSON.parse(text) as string[]);
}

/** The stored text of `handEditIds`: null when none. */
export function handEditIdsJson(ids: ReadonlyMap<string, HandEditIds> | undefined): string | null {
  if (ids === undefined || ids.size === 0) return null;
  const sorted = [...ids].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify(Object.fromEntries(sorted.map(([path, { found, left }]) => [path, [found, left]])));
}

/** What a call's run found and left in its hand-edited paths (null or missing: not recorded, or none). */
export function handEditIdsOf(text: string | null | undefined): Map<string, HandEditIds> {
  if (text === null || text === undefined) return new Map();
  const rows = Object.entries(JSON.parse(text) as Record<string, [string | null, string | null]>);
  return new Map(rows.map(([path, [found, left]]) => [path, { found, left }]));
}
