// Whether a file's content is one a checkpoint of the session holds at that path: writing over it loses nothing.
import type { Step, Tx } from "../../store/port/index.js";
import { contentOf } from "./file-id.js";
import { TreeReader, filesAt } from "./trees.js";

/** Those of `files` (path to file id) whose content some checkpoint of session `sessionId` holds at the same path. */
export function* capturedPaths(tx: Tx, sessionId: string, files: ReadonlyMap<string, string>): Step<Set<string>> {
  const out = new Set<string>();
  const left = new Map([...files].map(([path, id]) => [path, contentOf(id)]));
  if (left.size === 0) return out;
  const reader = new TreeReader();
  for (const manifestId of yield* tx.sessionManifests(sessionId)) {
    const root = yield* reader.rootOf(tx, manifestId);
    for (const [path, id] of yield* filesAt(tx, reader, root, [...left.keys()])) {
      if (contentOf(id) !== left.get(path)) continue;
      out.add(path);
      left.delete(path);
    }
    if (left.size === 0) break;
  }
  return out;
}
