// Whether a checkpoint of a session keeps a file's content: a save it holds is not lost when a move writes over it.
import type { Step, Tx } from "../../store/port/index.js";
import { filesAt, TreeReader } from "../workspace/trees.js";

/** Those of `files` (path, file id) some checkpoint of the session not expired at `now` holds at that path. */
export function* heldInCheckpoints(
  tx: Tx,
  userId: string,
  sessionId: string,
  files: ReadonlyMap<string, string>,
  now: number,
): Step<Set<string>> {
  const held = new Set<string>();
  const reader = new TreeReader();
  for (const c of yield* tx.sessionCheckpoints(userId, sessionId)) {
    const left = [...files.keys()].filter((path) => !held.has(path));
    if (left.length === 0) break;
    // An expired checkpoint's files may be pruned any time: it keeps nothing.
    const snapshot = c.expiresAt !== null && c.expiresAt <= now ? undefined : yield* tx.checkpointManifest(c.id);
    if (!snapshot) continue;
    const ids = yield* filesAt(tx, reader, yield* reader.rootOf(tx, snapshot.manifestId), left);
    for (const path of left) if (ids.get(path) === files.get(path)) held.add(path);
  }
  return held;
}
