// Queries as steps: each yields the promise of one query on the unit's client and is resumed with its result. Round
// trips are what a unit costs on a network: a unit's BEGIN and its writes whose results it does not read wait and
// travel with its next statement (or its COMMIT), as one simple query with the values inlined as literals.
import { createHash } from "node:crypto";
import type { ClientBase, CustomTypesConfig, QueryArrayResult, QueryConfig, QueryResult } from "pg";
import type { Step } from "../port/index.js";

/** Statement names by text: a named statement is parsed and planned once per connection, then only bound. */
const names = new Map<string, string>();

function nameOf(text: string): string {
  let name = names.get(text);
  if (name === undefined) names.set(text, (name = `fp_${createHash("sha1").update(text).digest("hex").slice(0, 24)}`));
  return name;
}

/**
 * A value as the text node-postgres sends for a parameter, quoted: a literal of unknown type, so the server infers its
 * type from the statement as it does for a parameter (`NULL`; a bytea as its hex text). Undefined for other values
 * (arrays, objects), which go as parameters.
 */
function literal(client: ClientBase, value: unknown): string | undefined {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "string") return client.escapeLiteral(value);
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") return `'${String(value)}'`;
  // An escape string: read the same whatever the server's standard_conforming_strings says.
  if (Buffer.isBuffer(value)) return `E'\\\\x${value.toString("hex")}'`;
  return undefined;
}

/** `text` with its `$n` parameters replaced by `values` as literals (our statements hold no `$` in strings); undefined when one cannot be. */
function inline(client: ClientBase, text: string, values: unknown[]): string | undefined {
  const literals = values.map((v) => literal(client, v));
  if (literals.some((l) => l === undefined)) return undefined;
  return values.length === 0 ? text : text.replace(/\$(\d+)/g, (_, n: string) => literals[Number(n) - 1]!);
}

/** One unit's queries: every statement of a unit goes through the client it holds. */
export class Sql {
  readonly #client: ClientBase;
  readonly #types: CustomTypesConfig;
  /** Statements not sent yet (the unit's BEGIN, then writes whose results nobody reads), already inlined. */
  #waiting: string[] = [];
  /** Whether anything of this unit reached the server (a unit that sent nothing has nothing to commit). */
  #sent = false;

  constructor(client: ClientBase, types: CustomTypesConfig) {
    this.#client = client;
    this.#types = types;
  }

  /** Starts a unit: `begin` (with its lock statements) travels with the unit's first statement. */
  start(begin: string | null): void {
    this.#waiting = begin === null ? [] : [begin];
    this.#sent = false;
  }

  /** Ends a unit: sends what still waits followed by COMMIT (nothing when the unit never reached the server). */
  async commit(): Promise<void> {
    const waiting = this.#waiting;
    this.#waiting = [];
    if (!this.#sent && waiting.length <= 1 && waiting.every((s) => s.startsWith("BEGIN"))) return;
    this.#sent = true;
    await this.#client.query([...waiting, "COMMIT"].join(";\n"));
  }

  /** After a failure: whether the server holds an open transaction of this unit to roll back. */
  get open(): boolean {
    this.#waiting = [];
    return this.#sent;
  }

  /** Sends what waits, for a unit without a transaction (`query`). */
  *flush(): Step<void> {
    if (this.#waiting.length === 0) return;
    const text = this.#waiting.join(";\n");
    this.#waiting = [];
    this.#sent = true;
    yield this.#client.query(text);
  }

  /** A write whose result the unit does not read: sent with the unit's next statement or its COMMIT. */
  *later(text: string, values: unknown[] = []): Step<void> {
    const inlined = inline(this.#client, text, values);
    if (inlined !== undefined) this.#waiting.push(inlined);
    else yield* this.exec(text, values);
  }

  /** Runs one statement (with whatever waits ahead of it, in one round trip) and returns its result. */
  *#query<R extends QueryResult | QueryArrayResult>(text: string, values: unknown[], rowMode?: "array"): Step<R> {
    this.#sent = true;
    const inlined = this.#waiting.length === 0 ? undefined : inline(this.#client, text, values);
    const config: QueryConfig =
      inlined === undefined ? { name: nameOf(text), text, values, types: this.#types } : { text: "", types: this.#types };
    if (inlined === undefined) yield* this.flush();
    else {
      config.text = [...this.#waiting, inlined].join(";\n");
      this.#waiting = [];
    }
    const results = (yield rowMode ? this.#client.query({ ...config, rowMode }) : this.#client.query(config)) as R | R[];
    // A simple query of several statements answers each: the last is this statement's.
    return Array.isArray(results) ? results[results.length - 1]! : results;
  }

  /** Rows as objects keyed by column alias. */
  *rows<R>(text: string, values: unknown[] = []): Step<R[]> {
    return (yield* this.#query<QueryResult>(text, values)).rows as R[];
  }

  /** The first row, if any. */
  *one<R>(text: string, values: unknown[] = []): Step<R | undefined> {
    return (yield* this.rows<R>(text, values))[0];
  }

  /** Rows as arrays in column order: joins whose tables share column names read one tuple. */
  *tuples<T extends unknown[]>(text: string, values: unknown[] = []): Step<T[]> {
    return (yield* this.#query<QueryArrayResult>(text, values, "array")).rows as T[];
  }

  /** The first column of each row. */
  *column<V>(text: string, values: unknown[] = []): Step<V[]> {
    return (yield* this.tuples<[V]>(text, values)).map((t) => t[0]);
  }

  /** Runs a statement; returns how many rows it changed. */
  *exec(text: string, values: unknown[] = []): Step<number> {
    return (yield* this.#query<QueryResult>(text, values)).rowCount ?? 0;
  }
}
