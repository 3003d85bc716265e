// The puts and pending writes of each thread still landing: LangGraph runs a step's nodes while the step's (and the
// previous step's) puts are under way, so a tool that reaches the thread's session waits for them first, or its call
// would land before the input it answers (an edit of that input would then keep it) or on the branch a forking put
// leaves (which would undo it). Tracked by thread (`sessionFor` waits), and by session in the engine (a tool call of
// any handle of the session, of this Forkpoint, waits: `invoke`, `recordToolCall`).
import { LandingWrites } from "../sessions/langgraph-bridge.js";

export class LandingPuts {
  readonly #byThread = new LandingWrites();
  readonly #bySession: LandingWrites;

  /** `bySession`: the engine's, which its tool calls wait for. */
  constructor(bySession: LandingWrites) {
    this.#bySession = bySession;
  }

  /** Tracks `write` under the thread's key, and its session's id when known (see `toSession`), until it settles. */
  add<T>(key: string, write: Promise<T>, sessionId?: string): Promise<T> {
    if (sessionId !== undefined) this.#bySession.add(sessionId, write);
    return this.#byThread.add(key, write);
  }

  /** Tracks `write` under the session's id too, once the put learns its thread's session (a put that starts it). */
  toSession(sessionId: string, write: Promise<unknown>): void {
    this.#bySession.add(sessionId, write);
  }

  /** Settles once every write of the thread made so far has landed or failed (their failures are their callers'). */
  async settled(key: string): Promise<void> {
    await this.#byThread.settled(key);
  }
}
