// One tool run at a time per workspace directory in this process: what the files show changed while a run went on is
// then that run's own (two at once would each be credited with the other's changes). A call made from inside a run
// (a handler's own `invoke`) runs within it, its changes the outer run's too. A run that waits too long (a handler
// that waits on a call queued behind it, or one that hangs) goes ahead: then neither run's changes are its own.
import { AsyncLocalStorage } from "node:async_hooks";

/** How long a run waits for its turn before it goes ahead alongside the one holding it (ms). */
export const TURN_WAIT_MS = 10_000;
/**
 * The wait a run takes by default, read at each run: `TURN_WAIT_MS`. Tests whose runs wait out a turn on purpose (a
 * handler awaiting a move of its own workspace) set it shorter for their file and back after it.
 */
export const turnWait = { ms: TURN_WAIT_MS };

/** The directories whose turn the current async context holds. */
const holding = new AsyncLocalStorage<ReadonlySet<string>>();
/** Per directory, what the next run waits for (the end of the last turn handed out), and the run holding it. */
const tails = new Map<string, Promise<void>>();
const holders = new Map<string, TurnState>();

interface TurnState {
  /** Another run went on at the same time: what the files show changed is not this run's alone. */
  shared: boolean;
}

/** A run's turn at a workspace: `within` runs the tool (nested calls then pass), `release` hands the turn on (once). */
export interface RunTurn {
  within<T>(fn: () => T): T;
  release(): void;
  /** Whether another run went on while this one ran: its changed paths are then not recorded as its own. */
  readonly shared: boolean;
}

/**
 * Waits until the runs before this one on `dir` are done (at most `waitMs`, and not past `closing`). `giveUp`: past
 * that, null (the turn handed on, the run holding it untouched) instead of going ahead beside it.
 */
export async function takeRunTurn(dir: string, closing: AbortSignal, waitMs?: number): Promise<RunTurn>;
export async function takeRunTurn(dir: string, closing: AbortSignal, waitMs: number | undefined, giveUp: true): Promise<RunTurn | null>;
export async function takeRunTurn(dir: string, closing: AbortSignal, waitMs = turnWait.ms, giveUp = false): Promise<RunTurn | null> {
  const held = holding.getStore();
  if (held?.has(dir)) return { within: (fn) => fn(), release: () => {}, shared: false };
  const before = tails.get(dir) ?? Promise.resolve();
  let done!: () => void;
  const ended = new Promise<void>((resolve) => (done = resolve));
  const tail = before.then(() => ended);
  tails.set(dir, tail);
  // Forgotten once it ends, unless a later run queued behind it (a run gone ahead ends its turn only after the one it
  // went past has ended too).
  void tail.then(() => {
    if (tails.get(dir) === tail) tails.delete(dir);
  });
  const state: TurnState = { shared: false };
  let timer: NodeJS.Timeout | undefined;
  let onClose: (() => void) | undefined;
  const waited = await Promise.race([
    before.then(() => true),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), waitMs);
      onClose = () => resolve(false);
      closing.addEventListener("abort", onClose, { once: true });
      if (closing.aborted) resolve(false);
    }),
  ]);
  clearTimeout(timer);
  if (onClose) closing.removeEventListener("abort", onClose);
  if (!waited && giveUp) {
    done();
    return null;
  }
  if (!waited) {
    // Going ahead beside the holder: neither run's changes are its own. The runs queued after this one wait for it.
    const holder = holders.get(dir);
    if (holder) holder.shared = true;
    state.shared = true;
  } else holders.set(dir, state);
  const mine = new Set([...(held ?? []), dir]);
  let released = false;
  return {
    within: (fn) => holding.run(mine, fn),
    release: () => {
      if (released) return;
      released = true;
      if (holders.get(dir) === state) holders.delete(dir);
      done();
    },
    get shared() {
      return state.shared;
    },
  };
}

/** Whether the current async context holds `dir`'s turn (a run, or a move, on it). */
export function holdsRunTurn(dir: string): boolean {
  return holding.getStore()?.has(dir) ?? false;
}
