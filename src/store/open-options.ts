// openForkpoint's options that pick and open a store: a SQLite file, a PostgreSQL database, or any store.
import { z } from "zod";
import type { Store } from "./port/index.js";
import type { PostgresTarget } from "./postgres/open.js";

/** The store's options of `openForkpoint`: which database, and how to open it. */
export interface StoreOpenOptions {
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
   * PostgreSQL: `false` behind a transaction-mode pooler (PgBouncer before 1.21, Supavisor, a cloud provider's pooler),
   * where a server connection serves other clients between transactions: no named prepared statement is used (each
   * statement is parsed per call) and nothing is kept on a connection across transactions. Default true.
   */
  preparedStatements?: boolean;
  /** SQLite: "normal" (WAL, synchronous=NORMAL: the default) or "full" (an fsync per commit). */
  durability?: "normal" | "full";
  /**
   * SQLite: how long a write waits for another process's lock, in ms. On every store: how long a checkpoint that
   * captures a workspace waits for another process's tool call or move of its session, and a write on a session's
   * current branch for a move of it running elsewhere, before it is refused (`CALL_IN_PROGRESS`, `MOVE_IN_PROGRESS`).
   * Default 15,000.
   */
  busyTimeoutMs?: number;
  /**
   * Fold SQLite's write-ahead log into the database file on a worker thread (default false). Without it, about
   * every hundred commits one stalls for that copy and its two fsyncs (2–4 ms here); with it, a commit does so
   * only if the worker falls 8,000 pages behind or stops. For write-heavy processes: the worker costs 9–16 MB of
   * RSS and starts after this handle's first 256 write transactions.
   */
  walWorker?: boolean;
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
  if (typeof v === "string") return v.length === 0 ? "must not be empty" : connectionStringProblem(v);
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
  const problem = typeof o.connectionString === "string" ? connectionStringProblem(o.connectionString) : undefined;
  return problem && `connectionString ${problem}`;
}

/**
 * node-postgres reads a string with no scheme as a database name on a host named "base": only its URL form
 * (`postgres://`, `postgresql://`, `socket:`) and its socket form (a directory, then the database) name a server.
 */
function connectionStringProblem(v: string): string | undefined {
  if (/^(postgres|postgresql|socket):/i.test(v) || v.startsWith("/")) return undefined;
  return 'must be a connection URL ("postgres://user:password@host:port/database") or a socket directory and database';
}

const postgresTarget = z
  .custom<PostgresTarget>(() => true)
  .superRefine((v, ctx) => {
    const problem = postgresProblem(v);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

/** Checks of the store's options, merged with the engine's into openForkpoint's one strict schema. */
export const storeOpenOptions = {
  path: z.string().min(1).optional(),
  store: storeSchema.optional(),
  postgres: postgresTarget.optional(),
  preparedStatements: z.boolean().optional(),
  durability: z.enum(["normal", "full"]).optional(),
  busyTimeoutMs: z.number().int().min(0).optional(),
  walWorker: z.boolean().optional(),
};
