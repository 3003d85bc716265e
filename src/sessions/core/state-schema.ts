// State schema versions: the version new states are written under, and the migration chain older states are read through.
import { StateVersionError } from "../../models/errors.js";
import { toJsonText, type JsonValue } from "../../models/json.js";
import type { Limits } from "../../models/limits.js";

/** A migration step: a state of version k in, the same state at version k + 1 out. */
export type StateMigration = (state: JsonValue) => unknown;

/** The opener's state schema: what version it writes, and how it reads older ones. */
export interface StateSchema {
  version: number;
  /** Key k migrates a state of version k to k + 1. */
  migrate: Readonly<Record<number, StateMigration>>;
}

/** Every session's states before versions existed, and an opener that names none. */
export const DEFAULT_STATE_SCHEMA: StateSchema = { version: 1, migrate: {} };

/**
 * `value`, recorded under `from`, brought to the schema's version through each step in turn. The recorded value is
 * never rewritten: every read migrates again, so a step must be a pure function of its input.
 */
export function migrateState(schema: StateSchema, value: JsonValue, from: number, limits: Limits): JsonValue {
  if (from > schema.version) {
    throw new StateVersionError(
      "STATE_VERSION_UNKNOWN",
      from,
      `a state was recorded under state version ${from}, newer than this forkpoint's stateVersion ${schema.version}`,
    );
  }
  let state = value;
  for (let v = from; v < schema.version; v++) {
    const step = schema.migrate[v];
    if (!step) {
      throw new StateVersionError(
        "STATE_MIGRATION_MISSING",
        from,
        `a state of version ${from} needs migrateState[${v}] (version ${v} to ${v + 1}), which this forkpoint was not given`,
      );
    }
    let next: unknown;
    try {
      next = step(state);
      if (next instanceof Promise) throw new TypeError("a migration step must return the migrated state synchronously");
      // Checked as any state is, then read back as JSON, so that a step's output is exactly what a write would store.
      state = JSON.parse(toJsonText(next, `migrateState[${v}]`, limits)) as JsonValue;
    } catch (cause) {
      throw new StateVersionError("STATE_MIGRATION_FAILED", from, `migrateState[${v}] failed on a state of version ${from}`, { cause });
    }
  }
  return state;
}
