// Queries as steps: each yields the promise of one query on the unit's client and is resumed with its result.
import { createHash } from "node:crypto";
import type { ClientBase, CustomTypesConfig, QueryArrayResult, QueryResult } from "pg";
import type { Step } from "../port/index.js";

/** Statement names by text: a named statement is parsed and planned once per connection, then only bound. */
const names = new Map<string, string>();

function nameOf(text: string): string {
  let name = names.get(text);
  if (name === undefined) names.set(text, (name = `fp_${createHash("sha1").update(text).digest("hex").slice(0, 24)}`));
  return name;
}

/** One unit's queries: every statement of a unit goes through the client it holds. */
export class Sql {
  readonly #client: ClientBase;
  readonly #types: CustomTypesConfig;

  constructor(client: ClientBase, types: CustomTypesConfig) {
    this.#client = client;
    this.#types = types;
  }

  /** Rows as objects keyed by column alias. */
  *rows<R>(text: string, values: unknown[] = []): Step<R[]> {
    const result = (yield this.#client.query({ name: nameOf(text), text, values, types: this.#types })) as QueryResult;
    return result.rows as R[];
  }

  /** The first row, if any. */
  *one<R>(text: string, values: unknown[] = []): Step<R | undefined> {
    return (yield* this.rows<R>(text, values))[0];
  }

  /** Rows as arrays in column order: joins whose tables share column names read one tuple. */
  *tuples<T extends unknown[]>(text: string, values: unknown[] = []): Step<T[]> {
    const query = { name: nameOf(text), text, values, types: this.#types, rowMode: "array" as const };
    return ((yield this.#client.query(query)) as QueryArrayResult).rows as T[];
  }

  /** The first column of each row. */
  *column<V>(text: string, values: unknown[] = []): Step<V[]> {
    return (yield* this.tuples<[V]>(text, values)).map((t) => t[0]);
  }

  /** Runs a statement; returns how many rows it changed. */
  *exec(text: string, values: unknown[] = []): Step<number> {
    const result = (yield this.#client.query({ name: nameOf(text), text, values, types: this.#types })) as QueryResult;
    return result.rowCount ?? 0;
  }
}
