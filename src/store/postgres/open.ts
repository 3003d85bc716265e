// Connects to PostgreSQL: a pool from a connection string or a pg.PoolConfig, or the caller's own pg.Pool.
import { createRequire } from "node:module";
import type { CustomTypesConfig, Pool, PoolConfig } from "pg";
import { DatabaseError } from "../../models/errors.js";

/** What `openForkpoint({ postgres })` accepts: a connection string, a `pg.PoolConfig`, or a `pg.Pool`. */
export type PostgresTarget = string | PoolConfig | Pool;

export interface PostgresConnection {
  pool: Pool;
  /** True when the pool was made here: closing the store ends it (a caller's pool is theirs to end). */
  owned: boolean;
  /** Result parsers for every query forkpoint sends: pg-types' built-in ones, int8 as a JS number; the app's stay as they are. */
  types: CustomTypesConfig;
}

/** node-postgres, loaded when a PostgreSQL store is opened: it is an optional peer dependency. */
function loadDriver(): typeof import("pg") {
  try {
    const pg = createRequire(import.meta.url)("pg") as typeof import("pg") & { default?: typeof import("pg") };
    return pg.default ?? pg;
  } catch (cause) {
    throw new DatabaseError("DRIVER_MISSING", "a PostgreSQL store needs the `pg` package: npm install pg", { cause });
  }
}

const isPool = (target: PostgresTarget): target is Pool =>
  typeof target === "object" && typeof (target as Pool).connect === "function" && typeof (target as Pool).end === "function";

type Parser = (value: string) => unknown;
interface ParserModule {
  init(register: (oid: number, parse: Parser) => void): void;
}

/**
 * Result parsers for forkpoint's queries: node-postgres's built-in ones as pg-types ships them, each table built afresh
 * from pg-types' own modules (those of the pg-types this `pg` loads). `pg.types` is one registry for the whole process:
 * an app that changes a parser there (bool as 0/1, say), before or after forkpoint is loaded, must not change what
 * forkpoint reads back. Seqs and counts are int8, which pg-types returns as strings: every one forkpoint stores stays
 * below 2^53, so int8 reads as a JS number.
 */
function builtinTypes(pg: typeof import("pg")): CustomTypesConfig {
  const text = new Map<number, Parser>();
  const binary = new Map<number, Parser>();
  try {
    const fromPgTypes = createRequire(createRequire(import.meta.url).resolve("pg"));
    (fromPgTypes("pg-types/lib/textParsers") as ParserModule).init((oid, parse) => text.set(oid, parse));
    (fromPgTypes("pg-types/lib/binaryParsers") as ParserModule).init((oid, parse) => binary.set(oid, parse));
  } catch (cause) {
    throw new DatabaseError("DRIVER_MISSING", "a PostgreSQL store needs node-postgres 8 (`pg`, with its pg-types 2): npm install pg@8", {
      cause,
    });
  }
  text.set(pg.types.builtins.INT8, Number);
  // pg-types' answer for a type it has no parser for: the text as it came.
  const asText = (value: unknown) => String(value);
  return {
    getTypeParser: (oid: number, format?: "text" | "binary") => (format === "binary" ? binary : text).get(oid) ?? asText,
  } as CustomTypesConfig;
}

/** Built once per process: the tables are fixed, and every store shares them. */
let types: CustomTypesConfig | undefined;

export function openPostgres(target: PostgresTarget): PostgresConnection {
  const pg = loadDriver();
  types ??= builtinTypes(pg);
  if (isPool(target)) return { pool: target, owned: false, types };
  // Pipelining (node-postgres 8.23 has it; versions without it ignore the option) sends a unit's BEGIN with its first statement and its
  // inserts with COMMIT: a chat turn is two round trips instead of four. A config that says otherwise is kept.
  const config: PoolConfig = { pipeline: true, ...(typeof target === "string" ? { connectionString: target } : target) } as PoolConfig;
  const pool = new pg.Pool(config);
  // An idle client whose server went away emits 'error' on the pool: without a listener that would end the process.
  pool.on("error", () => undefined);
  return { pool, owned: true, types };
}
