// Holding a lease while work runs (a move, a tool call): renewed every third of it, on stores whose owners hold leases.
import type { Step, Tx } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";

export interface HeldLease {
  /** Stops renewing and waits for a renewal under way, so none is left running once the work returns. */
  release(): Promise<void>;
}

const NO_LEASE: HeldLease = { release: () => Promise.resolve() };

/**
 * Renews a lease of `leaseMs` (by default `ctx.ownership.leaseMs`) every third of it until released: `renew` extends it
 * in a write unit of the session and says whether this thread still holds it (false stops renewing). `what` names it
 * in the warning a failed renewal logs. Nothing to do where owners are processes (no `leaseMs`).
 */
export function holdLease(
  ctx: EngineContext,
  sessionId: string,
  what: string,
  renew: (tx: Tx, leaseMs: number) => Step<boolean>,
  leaseMs: number | null = ctx.ownership.leaseMs,
): HeldLease {
  if (leaseMs === null) return NO_LEASE;
  let held = true;
  let renewing: Promise<void> | null = null;
  const renewOnce = () =>
    ctx.store
      .write({ sessionId }, (tx) => renew(tx, leaseMs))
      .then(
        (still) => void (held = still),
        (error: unknown) => ctx.logger.warn(`forkpoint: renewing the lease of ${what} failed`, error),
      );
  const timer = setInterval(
    () => {
      // One renewal at a time: a slow one is not queued behind by more.
      if (!held || renewing) return;
      renewing = renewOnce().finally(() => (renewing = null));
    },
    Math.max(1, Math.floor(leaseMs / 3)),
  );
  timer.unref();
  return {
    release: async () => {
      clearInterval(timer);
      await renewing;
    },
  };
}
