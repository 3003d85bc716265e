// One tool run at a time per workspace directory in this process: what the files show changed while a run went on is
// then that run's own (two at once would each be credited with the other's changes). A call made from inside a run
// (a handler's own `invoke`) runs within it, its changes the outer run's too.
import { AsyncLocalStorage } from "node:async_hooks";

/** The directories whose turn the current async context holds. */
const holding = new AsyncLocalStorage<ReadonlySet<string>>();
/** Per directory, what the next run waits for: the end of the last turn handed out. */
const tails = new Map<string, Promise<void>>();

/** A run's turn at a workspace: `within` runs the tool (nested calls then pass), `release` hands the turn on (once). */
export interface RunTurn {
  within<T>(fn: () => T): T;
  release(): void;
}

/** Waits until the runs before this one on `dir` are done. */
export async function takeRunTurn(dir: string): Promise<RunTurn> {
  const held = holding.getStore();
  if (held?.has(dir)) return { within: (fn) => fn(), release: () => {} };
  const before = tails.get(dir) ?? Promise.resolve();
  let done!: () => void;
  const ended = new Promise<void>((resolve) => (done = resolve));
  const tail = before.then(() => ended);
  tails.set(dir, tail);
  await before;
  const mine = new Set([...(held ?? []), dir]);
  let released = false;
  return {
    within: (fn) => holding.run(mine, fn),
    release: () => {
      if (released) return;
      released = true;
      if (tails.get(dir) === tail) tails.delete(dir);
      done();
    },
  };
}
