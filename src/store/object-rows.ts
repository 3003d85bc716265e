// Prepared statements whose rows are built as plain objects in JS from raw tuples.
// better-sqlite3 builds named rows through V8's generic object API: for the short lookups every call makes
// (a session, a checkpoint, two entries) that is about half of the statement's cost; a tuple copied into an
// object here is twice as fast, with the same keys and values.
import type Database from "better-sqlite3";

/** What the store calls on a prepared statement. */
export interface Statement {
  run(...params: unknown[]): Database.RunResult;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  /** The underlying statement, returning each row's first column. */
  pluck(): Database.Statement;
  /** The underlying statement, returning each row as an array. */
  raw(): Database.Statement;
}

class ObjectRows implements Statement {
  readonly #stmt: Database.Statement;
  readonly #keys: string[];

  constructor(stmt: Database.Statement) {
    this.#keys = stmt.columns().map((c) => c.name);
    this.#stmt = stmt.raw(true);
  }

  #object(tuple: unknown[]): Record<string, unknown> {
    const row: Record<string, unknown> = {};
    // Later columns win over earlier ones of the same name, as in better-sqlite3's own objects.
    for (let i = 0; i < this.#keys.length; i++) row[this.#keys[i]!] = tuple[i];
    return row;
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
  pluck(): Database.Statement {
    return this.#stmt.raw(false).pluck(true);
  }
  raw(): Database.Statement {
    return this.#stmt;
  }
}

/** Prepares `sql`: statements that return rows give plain objects built from tuples; the others are as prepared. */
export function prepare(db: Database.Database, sql: string): Statement {
  const stmt = db.prepare(sql);
  return stmt.reader ? new ObjectRows(stmt) : stmt;
}
