// openForkpoint's options: the store (a SQLite file, a PostgreSQL database, or any store), tools, policies, limits.
import { z } from "zod";
import { autoCheckpointPolicy } from "../../models/inputs.js";
import { MAX_STATE_VERSION, type Limits } from "../../models/limits.js";
import { loggerSchema, type ForkpointLogger } from "../../models/logger.js";
import type { Store } from "../../store/port/index.js";
import type { PostgresTarget } from "../../store/open.js";
import type { ToolDefinition } from "../../tools/define-tool.js";
import { ValidationError } from "../../models/errors.js";
import type { StateMigration, StateSchema } from "./state-schema.js";

/** Options of `openForkpoint`. */
export interface ForkpointOptions {
  /** SQLite file (created if absent); ":memory:" for a private in-memory database. Default "./forkpoint.db". */
  path?: string;
  /** Any store implementing the port (`forkpoint`'s `Store`), instead of the embedded SQLite file. */
  store?: Store;
  /**
   * A PostgreSQL database shared by several app servers, instead of the SQLite file: a connection string, a
   * `pg.PoolConfig`, or a `pg.Pool` (left open on close). Needs the `pg` package installed (and `@types/pg` for these
   * types: without it, TypeScript takes any value here and the check at open still refuses what is none of the three).
   */
  postgres?: PostgresTarget;
  /**
   * On a shared database, how long (ms) a move's owner holds it without renewing (renewed every third of it for as long
   * as the move runs, and by each step's journal update); after that another server may take it over with `recover()`.
   * A tool call's owner holds it alike while the call runs: until the lease runs out, other servers' moves of its
   * session are refused (`CALL_IN_PROGRESS`); after that the call is `unknown`. Timed by the database server's clock,
   * not the app servers'. Default 30 s, at most 2^31 - 1 (about 24.8 days). Unused on SQLite, where an owner is a
   * process on the file's host.
   */
  leaseMs?: number;
  /**
   * PostgreSQL: `false` behind a transaction-mode pooler (PgBouncer before 1.21, Supavisor, a cloud provider's pooler),
   * where a server connection serves other clients between transactions: no named prepared statement is used (each
   * statement is parsed per call) and nothing is kept on a connection across transactions. Default true.
   */
  preparedStatements?: boolean;
  /** Tools that `invoke` runs and moves undo/replay, from `defineTool`. */
  tools?: ToolDefinition[];
  /** Automatic checkpoints; none unless given. */
  autoCheckpoint?: { everyMessages?: number; afterToolCalls?: boolean };
  /** SQLite: "normal" (WAL, synchronous=NORMAL: the default) or "full" (an fsync per commit). */
  durability?: "normal" | "full";
  /** SQLite: how long a write waits for another process's lock, in ms. Default 15,000. */
  busyTimeoutMs?: number;
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
   * Fold SQLite's write-ahead log into the database file on a worker thread (default false). Without it, about
   * every hundred commits one stalls for that copy and its two fsyncs (2–4 ms here); with it, a commit does so
   * only if the worker falls 8,000 pages behind or stops. For write-heavy processes: the worker costs 9–16 MB of
   * RSS and starts after this handle's first 256 write transactions.
   */
  walWorker?: boolean;
  /**
   * Where warnings and errors that no call can throw go (default `console`): a listener that throws, recovery at open
   * that fails or leaves moves waiting for tools, a WAL worker that stops, a workspace scan after a move that fails.
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

/** A store another package (or the caller) built: it implements the port's units of work. */
export const storeSchema = z.custom<Store>(
  (v) =>
    typeof v === "object" &&
    v !== null &&
    ["write", "read", "query", "close"].every((k) => typeof (v as Record<string, unknown>)[k] === "function"),
  "must implement the store port (write, read, query, close, ...)",
);

/**
 * What `postgres` takes, told apart as the store tells them apart: an object with `connect` is used as a pool, so it must
 * be one (a `pg.Client` has `connect` too, but one connection cannot serve a pool's concurrent transactions); any other
 * plain object is a pool's configuration.
 */
function postgresProblem(v: unknown): string | undefined {
  const wanted = "must be a connection string, a pg.PoolConfig or a pg.Pool";
  if (typeof v === "string") return v.length === 0 ? "must not be empty" : undefined;
  if (typeof v !== "object" || v === null || Array.isArray(v)) return wanted;
  const o = v as Record<string, unknown>;
  if (typeof o.connect === "function") {
    const pool = typeof o.end === "function" && typeof o.query === "function" && "totalCount" in o;
    return pool ? undefined : "must be a pg.Pool (a pg.Client is one connection: pass its pool, or its configuration)";
  }
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return wanted;
  if (o.connectionString !== undefined && (typeof o.connectionString !== "string" || o.connectionString.length === 0))
    return "connectionString must be a non-empty string";
  return undefined;
}

const postgresTarget = z
  .custom<PostgresTarget>(() => true)
  .superRefine((v, ctx) => {
    const problem = postgresProblem(v);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

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

export const openOptions = z.strictObject({
  path: z.string().min(1).optional(),
  store: storeSchema.optional(),
  // Renewed every third of it: a timer past 2^31 - 1 ms fires at once (Node clamps it to 1 ms), so a longer lease
  // would be renewed in a loop for as long as its move or call runs.
  leaseMs: z.number().int().min(100).max(2_147_483_647).optional(),
  postgres: postgresTarget.optional(),
  preparedStatements: z.boolean().optional(),
  tools: z.array(z.custom<ToolDefinition>()).optional(),
  autoCheckpoint: autoCheckpointPolicy.optional(),
  durability: z.enum(["normal", "full"]).optional(),
  busyTimeoutMs: z.number().int().min(0).optional(),
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
  walWorker: z.boolean().optional(),
  logger: loggerSchema.optional(),
  ...stateSchemaFields(),
});

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
