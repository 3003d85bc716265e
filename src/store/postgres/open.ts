// Connects to PostgreSQL: a pool from a connection string or a pg.PoolConfig, or the caller's own pg.Pool.
import { createRequire } from "node:module";
import type { CustomTypesConfig, Pool, PoolConfig } from "pg";
import { DatabaseError } from "../../models/errors.js";

/** What `openForkpoint({ postgres })` accepts. */
export type PostgresTarget = string | PoolConfig | Pool;

export interface PostgresConnection {
  pool: Pool;
  /** True when the pool was made here: closing the store ends it (a caller's pool is theirs to end). */
  owned: boolean;
  /** Result parsers for every query forkpoint sends: int8 as a JS number; the pool's own parsers stay as they are. */
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

export function openPostgres(target: PostgresTarget): PostgresConnection {
  const pg = loadDriver();
  const INT8 = pg.types.builtins.INT8;
  // Seqs and counts are int8, which node-postgres returns as strings; every one forkpoint stores stays below 2^53.
  const types = {
    getTypeParser: (oid: number, format?: "text" | "binary") =>
      oid === INT8 && format !== "binary" ? Number : pg.types.getTypeParser(oid, format),
  } as CustomTypesConfig;
  if (isPool(target)) return { pool: target, owned: false, types };
  // Pipelining (node-postgres 8.23 has it; versions without it ignore the option) sends a unit's BEGIN with its first statement and its
  // inserts with COMMIT: a chat turn is two round trips instead of four. A config that says otherwise is kept.
  const config: PoolConfig = { pipeline: true, ...(typeof target === "string" ? { connectionString: target } : target) } as PoolConfig;
  const pool = new pg.Pool(config);
  // An idle client whose server went away emits 'error' on the pool: without a listener that would end the process.
  pool.on("error", () => undefined);
  return { pool, owned: true, types };
}
