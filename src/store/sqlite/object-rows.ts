// Prepared statements whose rows are built as plain objects in JS from raw tuples.
// better-sqlite3 builds named rows through V8's generic object API: for the short lookups every call makes
// (a session, a checkpoint, two entries) that is a third to a half of the statement's cost; a tuple copied into
// an object here gives the same keys and values for less.
import type Database from "better-sqlite3";

/** What the store calls on a prepared statement. */
export interface Statement {
  run(...params: unknown[]): Database.RunResult;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

/** How a statement returns rows: objects keyed by column name, arrays (`raw`), or the first column (`pluck`). */
export type RowMode = "object" | "raw" | "pluck";

type Build = (tuple: unknown[]) => Record<string, unknown>;

/**
 * A function building one statement's rows as an object literal of its column names: every row of a statement has
 * the same shape from the start. Filling an empty object key by key goes through V8's keyed stores, shared by every
 * statement: once a process has read rows of many shapes (a history, a listing), each such store takes the slow
 * generic path, and a session's row cost a quarter of an edit. Later columns win over earlier ones of the same name,
 * as in better-sqlite3's own objects (the first one's place, the last one's value).
 */
function builder(keys: readonly string[]): { width: number; build: Build } {
  const last = new Map<string, number>();
  keys.forEach((key, i) => last.set(key, i));
  // Each name is written as a JSON string: no name reaches the code as code. A plain `"__proto__"` key sets the row's
  // prototype, as the driver's and an assignment's does.
  const fields = [...last].map(([key, i]) => `${JSON.stringify(key)}: t[${i}]`);
  try {
    return { width: keys.length, build: new Function("t", `return { ${fields.join(", ")} };`) as Build };
  } catch {
    // Code generation from strings turned off (`--disallow-code-generation-from-strings`): filled key by key.
    return { width: keys.length, build: (t) => fill(last, t, 0) };
  }
}

/** A row of `places` (each key's column) from `tuple[at…]`, filled key by key. */
export function fill(places: Iterable<readonly [string, number]>, tuple: unknown[], at: number): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const [key, i] of places) row[key] = tuple[at + i];
  return row;
}

class ObjectRows implements Statement {
  readonly #stmt: Database.Statement;
  #rows: { width: number; build: Build };

  constructor(stmt: Database.Statement) {
    this.#rows = builder(stmt.columns().map((c) => c.name));
    this.#stmt = stmt.raw(true);
  }

  #object(tuple: unknown[]): Record<string, unknown> {
    // The names are read once; a statement whose columns changed since (a `*` over an altered table) reads them again.
    if (tuple.length !== this.#rows.width) this.#rows = builder(this.#stmt.columns().map((c) => c.name));
    return this.#rows.build(tuple);
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
