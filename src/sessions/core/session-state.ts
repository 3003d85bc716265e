// A handle's own state schema: `stateVersion` and `migrateState` given to createSession or getSession, over the Forkpoint's.
import { readingInput } from "../../models/json.js";
import { parseOptions } from "../../models/inputs.js";
import type { StateMigration } from "./state-schema.js";
import type { EngineContext } from "./context.js";
import { sessionStateOptions, stateSchemaOf } from "./open-options.js";

/**
 * A state schema for one session handle, instead of the Forkpoint's: the version its new states are written under and
 * the migrations its reads run. Functions cannot be stored, so it lives on the handle only: a later `getSession`
 * without these options reads and writes under the Forkpoint's schema again.
 */
export interface SessionStateOptions {
  /** The state schema version this handle writes states under (default 1, as at open). */
  stateVersion?: number;
  /** Key k (1 ≤ k < `stateVersion`) migrates a state of version k to k + 1; a pure, synchronous function. */
  migrateState?: Record<number, StateMigration>;
}

/**
 * `input` without the state schema options, and the context a handle given them works in (`ctx` itself when there are
 * none). Validated as at open, with the same field names, before anything is written.
 */
export function withSessionState<T>(ctx: EngineContext, input: T & SessionStateOptions): { ctx: EngineContext; rest: T } {
  if (typeof input !== "object" || input === null) return { ctx, rest: input };
  // Its own copy: a getter that throws is a ValidationError here, and the rest is read once.
  const { stateVersion, migrateState, ...rest } = readingInput(() => ({ ...input }), "options");
  if (stateVersion === undefined && migrateState === undefined) return { ctx, rest: rest as T };
  const o = parseOptions(sessionStateOptions, { stateVersion, migrateState }, "options");
  return { ctx: { ...ctx, stateSchema: stateSchemaOf(o.stateVersion, o.migrateState) }, rest: rest as T };
}
