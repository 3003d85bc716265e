// A call's completion whose write lost its connection: this handle writes it once the connection is back.
import { setTimeout as sleep } from "node:timers/promises";
import { DatabaseError } from "../../models/errors.js";
import type { EngineContext } from "../core/context.js";

/** The first wait before writing the completion again, and the longest: doubled after each attempt that fails. */
const FIRST_WAIT_MS = 50;
const LONGEST_WAIT_MS = 5_000;

/** A completion being written again: `done` settles when it lands or is given up; `now` cuts the current wait short. */
interface Landing {
  done: Promise<void>;
  now(): void;
}

/**
 * Completions this process writes again after a lost connection, by invocation id: a retry of the request that made the
 * call waits for its completion instead of answering `CALL_UNKNOWN` (the call's result is known here, only unwritten).
 */
const landing = new Map<string, Landing>();

/** A failure of the connection (PostgreSQL's; SQLite has none to lose): the database may have the write, or not. */
export function lostConnection(error: unknown): boolean {
  return error instanceof DatabaseError && error.code === "CANNOT_CONNECT";
}

/**
 * Writes a completion again (`attempt`, which must write nothing when an earlier attempt's commit did land) until it
 * lands, the handle closes (the call then stays `running`: unknown, as after a crash, since a later open cannot know its
 * result), or it fails otherwise (logged: the session was deleted, say). Waits grow from 50 ms to 5 s; a retry of the
 * call's request cuts a wait short (`settleFirst`). `then` runs once it settles, landed or not (it releases the call's
 * lease and in-flight mark). Closing waits for it.
 */
export function landInBackground(ctx: EngineContext, invocationId: string, attempt: () => Promise<void>, then: () => Promise<void>): void {
  let wake = new AbortController();
  const run = async () => {
    let wait = FIRST_WAIT_MS;
    for (;;) {
      try {
        await sleep(wait, undefined, { signal: AbortSignal.any([ctx.closing, wake.signal]) });
      } catch {
        // Cut short: by a retry of the request (try now), or by closing (give up).
      }
      if (ctx.closing.aborted) {
        ctx.logger.warn(
          `forkpoint: the handle closed before the completion of tool call ${invocationId} could be written: it stays unknown`,
        );
        return;
      }
      wake = new AbortController();
      try {
        await attempt();
        return;
      } catch (error) {
        if (!lostConnection(error)) {
          ctx.logger.error(`forkpoint: writing the completion of tool call ${invocationId} failed: it stays unknown`, error);
          return;
        }
      }
      wait = Math.min(LONGEST_WAIT_MS, wait * 2);
    }
  };
  const done = run().finally(async () => {
    landing.delete(invocationId);
    await then();
  });
  landing.set(invocationId, { done, now: () => wake.abort() });
  void ctx.track(done);
}

/** Waits for the completion of `invocationId` this process is writing again, trying it at once; nothing if none is. */
export async function settleFirst(invocationId: string): Promise<void> {
  const pending = landing.get(invocationId);
  if (!pending) return;
  pending.now();
  await pending.done;
}
