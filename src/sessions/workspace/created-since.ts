// The files made by hand, since a no-change call ran, where its replay may write (see `writtenPaths` in
// conversation-drift.ts): those it never saw there, which its replay could destroy unsaved.
import { lstatSync } from "node:fs";
import { join } from "node:path";
import type { Step, Tx, WorkspaceRow } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { reaches } from "./named-paths.js";
import { restoreCheck } from "./prepare-restore.js";
import { filesAt, TreeReader } from "./trees.js";

/**
 * The drifted files under the paths of `named` (each with the snapshots of what was there as a call naming it ran) that
 * are there now and missing from forkpoint's last look or from one of those snapshots (a new file, or one where a
 * folder was). A file there in both, edited by hand since, is not among them: the call saw it there (a read tool's
 * file), and its replay over the edit is no loss the drift check weighs.
 */
export async function createdSince(ctx: EngineContext, ws: WorkspaceRow, named: ReadonlyMap<string, readonly number[]>): Promise<string[]> {
  if (named.size === 0) return [];
  const reach = new Set(named.keys());
  const drifted = (await restoreCheck(ctx, ws, ws.manifestId)).drifted;
  const present = drifted.filter((path) => reaches(reach, path) && lstatSync(join(ws.dir, path), { throwIfNoEntry: false }));
  if (present.length === 0) return [];
  return ctx.store.read((tx) => missingIn(tx, ws.manifestId, named, present));
}

/** Those of `paths` missing from snapshot `last` or from one of the snapshots of a path of `named` reaching them. */
function* missingIn(tx: Tx, last: number, named: ReadonlyMap<string, readonly number[]>, paths: readonly string[]): Step<string[]> {
  const reader = new TreeReader();
  const out: string[] = [];
  for (const path of paths) {
    const ids = new Set([last]);
    for (const [at, snapshots] of named) if (reaches(new Set([at]), path)) for (const id of snapshots) ids.add(id);
    for (const id of ids) {
      const root = yield* reader.rootOf(tx, id);
      if (!(yield* filesAt(tx, reader, root, [path])).has(path)) {
        out.push(path);
        break;
      }
    }
  }
  return out;
}
