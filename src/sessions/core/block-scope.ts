// The guarded blocks (atomic) a call runs inside, and the branches each block's own writes and moves landed on or made:
// a failed block continues those, not every branch another opener wrote on while it ran.
import { AsyncLocalStorage } from "node:async_hooks";

/** One running block: its handle's owner (a handle's event emitter), and the branches its own calls wrote or made. */
interface BlockFrame {
  owner: object;
  branches: Set<string>;
}

const blocks = new AsyncLocalStorage<readonly BlockFrame[]>();

/** Runs `run` as a guarded block of `owner`; it gets the set its own writes and moves fill (an inner block's too). */
export function inBlock<T>(owner: object, run: (branches: ReadonlySet<string>) => Promise<T>): Promise<T> {
  const frame: BlockFrame = { owner, branches: new Set() };
  return blocks.run([...(blocks.getStore() ?? []), frame], () => run(frame.branches));
}

/** Notes, in every block of `owner` this call runs inside, that the call wrote on or made `branchId`. */
export function noteBlockBranch(owner: object, branchId: string): void {
  for (const frame of blocks.getStore() ?? []) if (frame.owner === owner) frame.branches.add(branchId);
}
