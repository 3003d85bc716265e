// The files made by hand, since a no-change call ran, where its undo or replay may write (see `writtenPaths` in
// conversation-drift.ts): those it never saw there, which its undo or replay could destroy unsaved.
import { lstatSync } from "node:fs";
import { join } from "node:path";
import type { Step, Tx, WorkspaceRow } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { reaches } from "./named-paths.js";
import { restoreCheck } from "./prepare-restore.js";
import { filesAt, TreeReader } from "./trees.js";

/** What tells what was there as a call naming a path ran: a snapshot's id, or the files its run found there. */
export type NamedSeen = number | ReadonlySet<string>;

/**
 * The drifted files under the paths of `named` (each with what tells what was there as a call naming it ran) that are
 * there now and missing from one of those (a new file, or one where a folder was). A file there in all, edited by hand
 * since, is not among them: the call saw it there (a read tool's file), and its replay over the edit is no loss the
 * drift check weighs.
 */
export async function createdSince(
  ctx: EngineContext,
  ws: WorkspaceRow,
  named: ReadonlyMap<string, readonly NamedSeen[]>,
): Promise<string[]> {
  if (named.size === 0) return [];
  const reach = new Set(named.keys());
  const drifted = (await restoreCheck(ctx, ws, ws.manifestId)).drifted;
  const present = drifted.filter((path) => reaches(reach, path) && lstatSync(join(ws.dir, path), { throwIfNoEntry: false }));
  if (present.length === 0) return [];
  return ctx.store.read((tx) => missingIn(tx, named, present));
}

/** Those of `paths` missing from one of the snapshots or found files of a path of `named` reaching them. */
function* missingIn(tx: Tx, named: ReadonlyMap<string, readonly NamedSeen[]>, paths: readonly string[]): Step<string[]> {
  const reader = new TreeReader();
  const out: string[] = [];
  for (const path of paths) {
    const seen = new Set<NamedSeen>();
    for (const [at, all] of named) if (reaches(new Set([at]), path)) for (const one of all) seen.add(one);
    for (const one of seen) {
      const there = typeof one === "number" ? (yield* filesAt(tx, reader, yield* reader.rootOf(tx, one), [path])).has(path) : one.has(path);
      if (!there) {
        out.push(path);
        break;
      }
    }
  }
  return out;
}
