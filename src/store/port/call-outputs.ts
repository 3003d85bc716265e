// How both stores write and read what a call's run is known to have left (`call_paths.outputs`: JSON `{ path: file id |
// null }`) and the paths that held a hand edit as it began (`call_paths.hand_edited`: a JSON array).
import type { CallOutputs } from "./calls.js";

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
