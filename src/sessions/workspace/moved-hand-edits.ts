// A hand edit a call's run moved (a rename, a copy then a delete; edited on the way or not) is drift where it lands
// too: made known there, a files move would delete it unsaved, no checkpoint holding it anywhere.
import type { HandEditIds } from "../../store/port/index.js";

/**
 * Takes out of `touched` (what the run left, by path) the files holding a hand edit it found (`handEditIds`), and,
 * when it deleted one, every file it made new (`was`: what each path held before it; one may hold that hand edit,
 * changed): they stay drift.
 */
export function keepMovedHandEdits(
  touched: Map<string, string | null>,
  handEditIds: ReadonlyMap<string, HandEditIds>,
  was: ReadonlyMap<string, string | null>,
): void {
  const found = new Set([...handEditIds.values()].flatMap((ids) => (ids.found === null ? [] : [ids.found])));
  const deletedHandEdit = [...handEditIds.values()].some((ids) => ids.found !== null && ids.left === null);
  for (const [path, id] of touched)
    if (id !== null && (found.has(id) || (deletedHandEdit && (was.get(path) ?? null) === null))) touched.delete(path);
}
