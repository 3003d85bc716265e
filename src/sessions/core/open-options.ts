// openForkpoint's options for the engine: tools, policies, limits, state schema, logger (the store's are src/store's).
import { z } from "zod";
import { autoCheckpointPolicy } from "../../models/inputs.js";
import { MAX_STATE_VERSION, type Limits } from "../../models/limits.js";
import { loggerSchema, type ForkpointLogger } from "../../models/logger.js";
import type { ToolDefinition } from "../../tools/define-tool.js";
import { ValidationError } from "../../models/errors.js";
import type { StateMigration, StateSchema } from "./state-schema.js";

/** The engine's options of `openForkpoint` (the store's are `StoreOpenOptions`). */
export interface EngineOptions {
  /**
   * On a shared database, how long (ms) a move's owner holds it without renewing (renewed every third of it for as long
   * as the move runs, and by each step's journal update); after that another server may take it over with `recover()`.
   * A tool call's owner holds it alike while the call runs: until the lease runs out, other servers' moves of its
   * session are refused (`CALL_IN_PROGRESS`); after that the call is `unknown`. Timed by the database server's clock,
   * not the app servers'. Default 30 s, at most 2^31 - 1 (about 24.8 days). Unused on SQLite, where an owner is a
   * process on the file's host.
   */
  leaseMs?: number;
  /** Tools that `invoke` runs and moves undo/replay, from `defineTool`. */
  tools?: ToolDefinition[];
  /** Automatic checkpoints; none unless given. */
  autoCheckpoint?: { everyMessages?: number; afterToolCalls?: boolean };
  /**
   * Open read-only: reads work, writes throw `DatabaseError` (code `READ_ONLY`), on either store. On PostgreSQL the
   * schema is checked, not migrated, and no interrupted move is resumed.
   */
  readonly?: boolean;
  /** Size limits (see `Limits`). */
  limits?: Partial<Limits>;
  /** Resume interrupted moves when opening (default true). */
  recover?: boolean;
  /**
   * Where warnings and errors that no call can throw go (default `console`): a listener that throws, recovery at open
   * that fails, leaves moves waiting for tools or finds an undo or replay a crash interrupted (unknown), a WAL worker
   * that stops, a workspace scan after a move that fails.
   */
  logger?: ForkpointLogger;
  /**
   * The state schema version this app writes states under (default 1). Every stored state records its version; a read
   * of an older one (`getState`, `restore`, a move's starting state, `setState`'s `prev`) runs it through
   * `migrateState`, and what was recorded is never rewritten. A state newer than this is a `StateVersionError`.
   */
  stateVersion?: number;
  /** Key k (1 ≤ k < `stateVersion`) migrates a state of version k to k + 1; a pure, synchronous function. */
  migrateState?: Record<number, StateMigration>;
}

/** `stateVersion` and `migrateState`, checked alike at open and per session (`createSession`, `getSession`). */
function stateSchemaFields() {
  return {
    stateVersion: z.number().int().min(1).max(MAX_STATE_VERSION).optional(),
    migrateState: z
      .record(
        z.string().regex(/^[1-9][0-9]*$/, "keys are state versions (1, 2, ...)"),
        z.custom<StateMigration>((v) => typeof v === "function", "must be a function"),
      )
      .optional(),
  };
}

/** A session handle's own state schema options: only these keys (the rest of the input is its verb's to check). */
export const sessionStateOptions = z.object(stateSchemaFields());

/** The engine's own options; the store's are its opener's (`StoreOpener.options`). */
export const engineOptions = {
  // Renewed every third of it: a timer past 2^31 - 1 ms fires at once (Node clamps it to 1 ms), so a longer lease
  // would be renewed in a loop for as long as its move or call runs.
  leaseMs: z.number().int().min(100).max(2_147_483_647).optional(),
  tools: z.array(z.custom<ToolDefinition>()).optional(),
  autoCheckpoint: autoCheckpointPolicy.optional(),
  readonly: z.boolean().optional(),
  limits: z
    .strictObject({
      maxPayloadBytes: z.number().int().positive().optional(),
      maxDepth: z.number().int().positive().optional(),
      maxStringField: z.number().int().positive().optional(),
      maxBatch: z.number().int().positive().optional(),
    })
    .optional(),
  recover: z.boolean().optional(),
  logger: loggerSchema.optional(),
  ...stateSchemaFields(),
};

/** The state schema of parsed `stateVersion` and `migrateState`: a step must lead from a version below `stateVersion`. */
export function stateSchemaOf(version = 1, migrate: Record<string, StateMigration> = {}): StateSchema {
  const steps: Record<number, StateMigration> = {};
  for (const [key, step] of Object.entries(migrate)) {
    const from = Number(key);
    if (from >= version) {
      throw new ValidationError(`migrateState.${key}`, `migrates version ${from} to ${from + 1}, beyond stateVersion ${version}`);
    }
    steps[from] = step;
  }
  return { version, migrate: steps };
}
