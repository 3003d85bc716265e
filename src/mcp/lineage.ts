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

/** How many pages of checkpoints `lastCheckpoint` reads at most before it says it found none. */
const MAX_PAGES = 10;

/**
 * The newest checkpoint (not automatic: those capture no files) on the current lineage, at or before its head: in an
 * MCP session, the files the workspace was last captured or restored as. Null when none is found.
 */
export async function lastCheckpoint(s: SessionHandle): Promise<Checkpoint | null> {
  const lineage = currentLineage(await s.branches());
  let cursor: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const { items, nextCursor } = await s.listCheckpoints({ limit: 100, cursor });
    const found = items.find((c) => !c.auto && c.position <= (lineage.get(c.branchId) ?? -1));
    if (found) return found;
    if (!nextCursor) return null;
    cursor = nextCursor;
  }
  return null;
}
