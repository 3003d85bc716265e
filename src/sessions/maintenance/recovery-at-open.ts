// Recovery at open: finishes what a crash interrupted before calls run, and looks again once a live lease runs out.
import type { Step, Store, Tx } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { recoverMoves, type RecoveryReport } from "../moves/recovery.js";

const EMPTY_RECOVERY: RecoveryReport = { resumed: [], waiting: [], failed: [], unknown: [], workspaces: [] };

/** Whether a crash left a move or a workspace restore unfinished: recovery at open then has work to do. */
function* interruptedWork(tx: Tx): Step<boolean> {
  return (yield* tx.runningMoves()).length > 0 || (yield* tx.restoringWorkspaces()).length > 0;
}

/** Where calls stand against recovery at open: `ready` resolves (never rejects) once it has run; `settled` says so at once. */
export interface RecoveryAtOpen {
  readonly ready: Promise<void>;
  readonly settled: () => boolean;
}

/**
 * Starts recovery at open on `engine` (`recover` false: none). Nothing a crash interrupted (the usual open) is ready at
 * once, so the first calls take their inputs as made: a synchronous store tells at once; an asynchronous one is asked
 * first, and calls wait for its answer.
 */
export function recoveryAtOpen(engine: EngineContext, store: Store, recover: boolean, logger: EngineContext["logger"]): RecoveryAtOpen {
  const interrupted: boolean | Promise<boolean> = !recover
    ? false
    : store.readNow
      ? store.readNow(interruptedWork)
      : store.read(interruptedWork);
  if (interrupted === false) return { ready: Promise.resolve(), settled: () => true };
  let settled = false;
  // Whether the store answered: before that, what fails is the database (a schema a newer version wrote, an
  // unreachable server), and no recovery was tried.
  let answered = false;
  const heard = (report: RecoveryReport): RecoveryReport => {
    for (const { moveId, error } of report.failed) logger.error(`forkpoint: resuming interrupted move ${moveId} at open failed`, error);
    // A step the crash interrupted is unknown until someone resolves it: said here, as no caller reads this report
    // (`fp.recover()` lists the call again until then).
    for (const moved of report.resumed)
      for (const call of moved.unknown.filter((c) => c.status !== "running"))
        logger.warn(
          `forkpoint: a crash (or a close) interrupted the undo or replay of ${call.tool} ${call.id}: whether it changed anything is unknown ` +
            "until resolveToolCall records it",
        );
    // A restore left as it is over someone's change leaves the directory partly restored: no caller reads this report.
    for (const w of report.workspaces.filter((w) => w.outcome === "drift"))
      logger.warn(
        `forkpoint: a crash interrupted a restore of ${w.dir} (session ${w.sessionId}), and files there changed since ` +
          `(${w.detail ?? w.paths.slice(0, 10).join(", ")}): they are left as they are, the directory partly restored; ` +
          "the next move with files refuses them (or, forced, saves them first)",
      );
    // A move waiting for its live owner is no news; one waiting for tools this opener lacks waits until someone acts.
    for (const { moveId, reason } of report.waiting) {
      if (reason.includes("TOOL_NOT_REGISTERED")) logger.warn(`forkpoint: interrupted move ${moveId} left for later: ${reason}`);
    }
    if (report.resumed.length + report.failed.length + report.workspaces.length > 0) engine.events.emit("recovery", report);
    retryLeased(report);
    return report;
  };
  // On a shared database, a move found under a lease that still held (its server crashed and was restarted before
  // the lease ran out) is looked at again once the lease has, until none waits on one: as reopening a SQLite file
  // finishes a dead process's move. Closing stops it.
  const retryLeased = (report: RecoveryReport): void => {
    const leaseMs = engine.ownership.leaseMs;
    if (leaseMs === null || !report.waiting.some(({ reason }) => !reason.includes("TOOL_NOT_REGISTERED"))) return;
    const timer = setTimeout(() => {
      if (engine.closing.aborted) return;
      void engine.track(
        recoverMoves(engine).then(heard, (error: unknown) => {
          if (!engine.closing.aborted) logger.error("forkpoint: recovering interrupted moves failed; fp.recover() retries", error);
        }),
      );
    }, leaseMs);
    timer.unref();
    engine.closing.addEventListener("abort", () => clearTimeout(timer), { once: true });
  };
  const recovery = Promise.resolve(interrupted).then(async (found) => {
    answered = true;
    if (!found) return EMPTY_RECOVERY;
    return heard(await recoverMoves(engine));
  });
  // Calls wait for recovery but do not fail with it (they are not what failed): the logger hears why it did.
  const ready = recovery.then(
    () => undefined,
    (error: unknown) =>
      answered
        ? logger.error("forkpoint: recovering interrupted moves at open failed; fp.recover() retries", error)
        : logger.error("forkpoint: opening the database failed, so interrupted moves were not looked for", error),
  );
  void ready.then(() => (settled = true));
  return { ready, settled: () => settled };
}
