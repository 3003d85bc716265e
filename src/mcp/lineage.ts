// Reads over a session's tree that the MCP tools need and the API answers in parts: a checkpoint by id or name, and
// the newest checkpoint on the current lineage (what the workspace's files were last captured or restored as).
import type { Branch, Checkpoint, SessionHandle } from "../index.js";
import { NotFoundError } from "../index.js";

/** The checkpoint `ref` names: an id, else the newest checkpoint with that name. */
export async function findCheckpoint(s: SessionHandle, ref: string): Promise<Checkpoint> {
  const byId = () => s.restore(ref).then((r) => r.checkpoint);
  const byName = async () => {
    try {
      return (await s.listCheckpoints({ name: ref, limit: 1 })).items[0];
    } catch {
      return undefined; // not a name a checkpoint can have
    }
  };
  if (ref.startsWith("cp_")) {
    try {
      return await byId();
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      const found = await byName();
      if (found) return found;
      throw error;
    }
  }
  return (await byName()) ?? (await byId());
}

/** The segments of the current lineage: each branch up to the position its child forks at (the current one, its head). */
function currentLineage(branches: readonly Branch[]): Map<string, number> {
  const byId = new Map(branches.map((b) => [b.id, b]));
  const upTo = new Map<string, number>();
  let branch = branches.find((b) => b.current);
  let limit = branch?.head ?? 0;
  while (branch) {
    upTo.set(branch.id, limit);
    limit = branch.forkPosition;
    branch = branch.parentId === null ? undefined : byId.get(branch.parentId);
  }
  return upTo;
}

/** Checkpoints read per page by `lastCheckpoint` (the most a listing gives). */
const PAGE = 1000;

/**
 * The newest checkpoint on the current lineage at or before its head (automatic ones capture no files, and are not
 * listed): in an MCP session, the files the workspace was last captured or restored as. Null when there is none. Every
 * page is read if need be: thousands of checkpoints on another branch do not hide the one that counts.
 */
export async function lastCheckpoint(s: SessionHandle): Promise<Checkpoint | null> {
  const lineage = currentLineage(await s.branches());
  let cursor: string | null = null;
  do {
    const { items, nextCursor } = await s.listCheckpoints({ auto: false, limit: PAGE, cursor });
    const found = items.find((c) => c.position <= (lineage.get(c.branchId) ?? -1));
    if (found) return found;
    cursor = nextCursor;
  } while (cursor);
  return null;
}
