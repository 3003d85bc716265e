// Prepared statements whose rows are built as plain objects in JS from raw tuples.
// better-sqlite3 builds named rows through V8's generic object API: for the short lookups every call makes
// (a session, a checkpoint, two entries) that is a third to a half of the statement's cost; a tuple copied into
// an object here gives the same keys and values for less.
import type Database from "better-sqlite3";
import { rowBuilder, type RowBuilder } from "../tuple-rows.js";

/** What the store calls on a prepared statement. */
export interface Statement {
  run(...params: unknown[]): Database.RunResult;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

/** How a statement returns rows: objects keyed by column name, arrays (`raw`), or the first column (`pluck`). */
export type RowMode = "object" | "raw" | "pluck";

/** A statement's rows as objects of its column names (see `rowBuilder`), and how many columns they have. */
const builder = (keys: string[]) => ({ width: keys.length, build: rowBuilder(keys) });

class ObjectRows implements Statement {
  readonly #stmt: Database.Statement;
  #rows: { width: number; build: RowBuilder };

  constructor(stmt: Database.Statement) {
    this.#rows = builder(stmt.columns().map((c) => c.name));
    this.#stmt = stmt.raw(true);
  }

  #object(tuple: unknown[]): Record<string, unknown> {
    // The names are read once; a statement whose columns changed since (a `*` over an altered table) reads them again.
    if (tuple.length !== this.#rows.width) this.#rows = builder(this.#stmt.columns().map((c) => c.name));
    return this.#rows.build(tuple, 0);
  }

  run(...params: unknown[]): Database.RunResult {
    return this.#stmt.run(...params);
  }
  get(...params: unknown[]): unknown {
    const tuple = this.#stmt.get(...params) as unknown[] | undefined;
    return tuple === undefined ? undefined : this.#object(tuple);
  }
  all(...params: unknown[]): unknown[] {
    return (this.#stmt.all(...params) as unknown[][]).map((t) => this.#object(t));
  }
}

/** Prepares `sql`. In the default `object` mode, a statement that returns rows gives plain objects built from tuples. */
export function prepare(db: Database.Database, sql: string, mode: RowMode = "object"): Statement {
  const stmt = db.prepare(sql);
  if (mode === "raw") return stmt.raw(true);
  if (mode === "pluck") return stmt.pluck(true);
  return stmt.reader ? new ObjectRows(stmt) : stmt;
}
