// The changes made to a workspace's files since forkpoint last saw them that no checkpoint keeps: what attaching it
// elsewhere or under other rules would stop forkpoint seeing (a rewind's undos would then write over them unsaved).
import { shownNames } from "../../models/unsafe-text.js";
import { ConflictError } from "../../models/errors.js";
import type { WorkspaceRow } from "../../store/port/index.js";
import type { EngineContext, SessionRef } from "../core/context.js";
import { heldInCheckpoints } from "../moves/held-in-checkpoint.js";
import { snapshotChanges } from "./snapshots.js";
import { scan, stateOf } from "./state.js";

/**
 * Refuses (`WORKSPACE_DRIFT`) leaving workspace `ws` for `next` while its files hold changes since forkpoint last saw
 * them that no checkpoint of the session keeps: a file saved by hand (after a call, or with none). A deletion keeps no
 * content, so it is none. Taking a checkpoint first keeps them, and a rewind may then write over them as over any save.
 */
export async function assertNothingUnsaved(ctx: EngineContext, ref: SessionRef, ws: WorkspaceRow, next: string): Promise<void> {
  const state = await stateOf(ctx, ws);
  const changed = await state.exclusive(async () => {
    await scan(ctx, state);
    return ctx.store.read((tx) => snapshotChanges(tx, ws.manifestId, state.cache.root));
  });
  const files = new Map(changed.flatMap((c) => (c.to === null ? [] : [[c.path, c.to] as const])));
  if (files.size === 0) return;
  const held = await ctx.store.read((tx) => heldInCheckpoints(tx, ref.userId, ref.id, files, ctx.now()));
  const unsaved = [...files.keys()].filter((path) => !held.has(path));
  if (unsaved.length === 0) return;
  const shown = shownNames(unsaved);
  throw new ConflictError(
    `the workspace ${ws.dir} changed outside forkpoint since it last saw it (${shown}), and no checkpoint keeps ` +
      `${unsaved.length === 1 ? "that change" : "those changes"}; attached ${next}, forkpoint would no longer see ` +
      `${unsaved.length === 1 ? "it" : "them"}, and a rewind could write over ${unsaved.length === 1 ? "it" : "them"}: ` +
      "take a checkpoint to keep them, then attach",
    "WORKSPACE_DRIFT",
  );
}
