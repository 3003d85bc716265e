// The PostgreSQL store: a pool shared by several servers; a write unit locks its sessions with advisory locks.
import type { CustomTypesConfig, Pool, PoolClient } from "pg";
import { DatabaseError } from "../../models/errors.js";
import { runAsync, type Body, type Store, type StoreCapabilities, type Tx, type WriteScope } from "../port/index.js";
import { callsTx } from "./calls.js";
import { checkpointsTx } from "./checkpoints.js";
import { CurrentCache, isStale } from "./current.js";
import { entriesTx } from "./entries.js";
import { isRetryable, translate } from "./errors.js";
import { langgraphTx } from "./langgraph.js";
import { lockStatement } from "./locks.js";
import { applyMigrations, assertMigrated } from "./migrate.js";
import { movesTx } from "./moves.js";
import { requestsTx } from "./requests.js";
import { openPostgres, type PostgresTarget } from "./open.js";
import { sessionsTx } from "./sessions.js";
import { Sql } from "./sql.js";
import { MIGRATIONS_TABLE, TABLES } from "./tables.js";
import { workspacesTx } from "./workspaces.js";

const CAPABILITIES: StoreCapabilities = { ownership: "lease", local: false };
const readOnly = () => new DatabaseError("READ_ONLY", "the database was opened read-only: writes are refused");
/** Deadlocks and serialization failures roll everything back: the unit runs again from its start, this many times. */
const RETRIES = 2;
/**
 * READ COMMITTED: a session's writes serialize on its advisory lock, so each statement sees every write committed
 * before it (positions stay gapless) and no unit fails to serialize.
 */
const BEGIN_WRITE = "BEGIN ISOLATION LEVEL READ COMMITTED";
/**
 * A write unit of a read-only handle: the server refuses its first write (READ_ONLY), so a unit that finds nothing to
 * write answers as it would on a writable database, as SQLite's read-only connection does.
 */
const BEGIN_WRITE_READ_ONLY = `${BEGIN_WRITE} READ ONLY`;
const BEGIN_READ = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
/** Write BEGINs a store keeps made (one per session it writes), emptied when full. */
const MAX_BEGINS = 10_000;

/** A connection the driver gave up on: closed rather than handed back to the pool. */
const isConnectionLoss = (error: unknown) =>
  error instanceof Error && (/^(08|57P0)/.test(String((error as { code?: unknown }).code)) || /Connection terminated/i.test(error.message));

export class PostgresStore implements Store {
  readonly capabilities = CAPABILITIES;
  readonly pool: Pool;
  readonly #owned: boolean;
  readonly #types: CustomTypesConfig;
  /**
   * The schema migrated (checked, when read-only): every unit waits for it (opening is synchronous, as `openForkpoint`
   * is). A failed attempt is dropped, and the next unit makes another: a server that could not be reached when the
   * handle opened (a database that starts after the app, a failover) leaves it usable once it can be.
   */
  #schema: Promise<void> | undefined;
  /** Per session, the last write unit made on this handle (settled, never rejected): the next one starts after it. */
  readonly #lastWrite = new Map<string, Promise<void>>();
  /** One transaction handle (and its statement sender) per pooled connection, made on its first unit. */
  readonly #units = new WeakMap<PoolClient, { sql: Sql; tx: Tx }>();
  /** A write unit's BEGIN with its locks, by lock statement: a session's turns send the same text, made once. */
  readonly #begins = new Map<string, string>();
  /** Sessions' current state as this store last wrote it: a write unit starts from it, checked by the server. */
  readonly #current = new CurrentCache();
  /** Connections asked for or held by units (a read's trailing COMMIT included): `close` waits until none is. */
  #holds = 0;
  #released: (() => void) | undefined;
  /** Opened read-only: write units are refused before they reach the server, and the schema is checked, not migrated. */
  readonly #readonly: boolean;
  /** Named prepared statements (parsed once per connection); off behind a transaction-mode pooler. */
  readonly #named: boolean;
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(target: PostgresTarget, options: { readonly?: boolean; preparedStatements?: boolean } = {}) {
    const { pool, owned, types } = openPostgres(target);
    this.pool = pool;
    this.#owned = owned;
    this.#types = types;
    this.#readonly = options.readonly === true;
    this.#named = options.preparedStatements !== false;
    pool.on("acquire", this.#hear);
    void this.#ready();
  }

  /**
   * A connection the server ends (a failover, pg_terminate_backend) emits 'error' besides failing its query; the pool
   * listens only while it is idle, and the end can arrive in the same read as the answer that hands it out, before a
   * unit could listen: an unheard 'error' ends the process. Each connection is heard from the moment it is handed out
   * (the caller's own too, on a pool it passed: their queries still fail); the unit closes it instead of pooling it.
   */
  readonly #heard = new WeakSet<PoolClient>();
  readonly #hear = (client: PoolClient): void => {
    if (this.#heard.has(client)) return;
    this.#heard.add(client);
    client.on("error", () => undefined);
  };

  /** The schema's current attempt, or a new one when none is under way or the last failed. */
  #ready(): Promise<void> {
    if (this.#schema) return this.#schema;
    const attempt: Promise<void> = (
      this.#readonly ? assertMigrated(this.pool, this.#types) : applyMigrations(this.pool, this.#types)
    ).catch((error: unknown) => {
      if (this.#schema === attempt) this.#schema = undefined;
      throw translate(error);
    });
    // Awaited by every unit and by `ready()`; an open store nobody uses must not leave an unhandled rejection.
    attempt.catch(() => undefined);
    return (this.#schema = attempt);
  }

  /** Opens a store and waits for its schema: rejects with the reason the database cannot be used. */
  static async open(target: PostgresTarget): Promise<PostgresStore> {
    const store = new PostgresStore(target);
    try {
      await store.ready();
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  /** Resolves once the schema is up to date; rejects with the reason it cannot be (the next call tries again). */
  ready(): Promise<void> {
    return this.#closed ? (this.#schema ?? Promise.resolve()) : this.#ready();
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Units run on their own pooled connections, never inside the caller's code: a call made from a body is its own. */
  get inUnit(): boolean {
    return false;
  }

  /** A connection for a unit, given back with `#release`. Units that asked before `close` get theirs and finish. */
  async #connect(): Promise<PoolClient> {
    if (this.#closed) throw new DatabaseError("CLOSED", "the forkpoint database is closed");
    this.#holds++;
    try {
      await this.#ready();
      return await this.pool.connect();
    } catch (error) {
      this.#let();
      throw translate(error);
    }
  }

  /** Gives a connection back to the pool (closing it when it was lost). */
  #release(client: PoolClient, lost?: Error): void {
    client.release(lost);
    this.#let();
  }

  #let(): void {
    if (--this.#holds === 0) this.#released?.();
  }

  #unit(client: PoolClient): { sql: Sql; tx: Tx } {
    let unit = this.#units.get(client);
    if (!unit) {
      const sql = new Sql(client, this.#types, this.#current, this.#named);
      const tx: Tx = {
        ...sessionsTx(sql),
        ...entriesTx(sql),
        ...callsTx(sql),
        ...checkpointsTx(sql),
        ...movesTx(sql),
        ...workspacesTx(sql),
        ...requestsTx(sql),
        langgraph: langgraphTx(sql),
      };
      this.#units.set(client, (unit = { sql, tx }));
    }
    return unit;
  }

  /** Runs `body` in a transaction opened by `begin` (sent with its first statement, locks included); again on a deadlock. */
  async #transaction<T>(begin: string, body: Body<T>, scope?: WriteScope): Promise<T> {
    for (let attempt = 0, stale = 0; ; attempt++) {
      const client = await this.#connect();
      let lost: Error | undefined;
      let trailing = false;
      const { sql, tx } = this.#unit(client);
      sql.start(begin, scope !== undefined);
      try {
        try {
          const value = await runAsync(body(tx));
          if (scope === undefined && sql.settled) {
            // A read-only transaction's COMMIT cannot change what it read: the caller has its value a round trip
            // sooner, and the connection goes back to the pool once the COMMIT is answered.
            trailing = true;
            this.#trail(client, sql);
            return value;
          }
          await sql.commit(scope);
          sql.settle(true, scope);
          return value;
        } catch (error) {
          sql.settle(false, scope, isStale(error));
          if (sql.open) await client.query("ROLLBACK").catch((rollback: Error) => (lost = rollback));
          throw error;
        }
      } catch (error) {
        if (isConnectionLoss(error)) lost ??= error as Error;
        // Another server changed the session since this one last wrote it: run again from a fresh read.
        if (isStale(error) && stale++ === 0) {
          attempt--;
          continue;
        }
        if (attempt < RETRIES && isRetryable(error)) continue;
        throw translate(error);
      } finally {
        if (!trailing) this.#release(client, lost);
      }
    }
  }

  /** Ends a read unit in the background: its COMMIT, then the connection released (closed if it was lost). */
  #trail(client: PoolClient, sql: Sql): void {
    void sql.commit().then(
      () => this.#release(client),
      (error: unknown) => this.#release(client, error instanceof Error ? error : new Error(String(error))),
    );
  }

  /**
   * Write units of a session commit in the order this handle was given them, as on SQLite (whose units run as they
   * are made): calls made one after another without awaiting land in that order. Each waits for the unit of its
   * sessions made before it, here, before it takes a connection (the session's advisory lock would serialize them
   * anyway, in whatever order their connections reached the server).
   */
  #begin(locks: string): string {
    let begin = this.#begins.get(locks);
    if (begin === undefined) {
      if (this.#begins.size >= MAX_BEGINS) this.#begins.clear();
      this.#begins.set(locks, (begin = `${this.#readonly ? BEGIN_WRITE_READ_ONLY : BEGIN_WRITE}; ${locks}`));
    }
    return begin;
  }

  write<T>(scope: WriteScope, body: Body<T>): Promise<T> {
    const begin = this.#begin(lockStatement(scope));
    if ("global" in scope) return this.#transaction(begin, body, scope);
    const ids = "sessionId" in scope ? [scope.sessionId] : [...new Set(scope.sessionIds)];
    const before = ids.flatMap((id) => this.#lastWrite.get(id) ?? []);
    const run =
      before.length === 0 ? this.#transaction(begin, body, scope) : Promise.all(before).then(() => this.#transaction(begin, body, scope));
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    for (const id of ids) this.#lastWrite.set(id, settled);
    void settled.then(() => {
      for (const id of ids) if (this.#lastWrite.get(id) === settled) this.#lastWrite.delete(id);
    });
    return run;
  }

  read<T>(body: Body<T>): Promise<T> {
    return this.#transaction(BEGIN_READ, body);
  }

  async query<T>(body: Body<T>): Promise<T> {
    const client = await this.#connect();
    let lost: Error | undefined;
    const { sql, tx } = this.#unit(client);
    sql.start(null);
    try {
      const value = await runAsync(body(tx));
      await runAsync(sql.flush());
      sql.settle(true);
      return value;
    } catch (error) {
      sql.settle(false);
      if (isConnectionLoss(error)) lost = error as Error;
      throw translate(error);
    } finally {
      this.#release(client, lost);
    }
  }

  /** Waits for the migration to settle; ends the pool only when the store made it. */
  close(): Promise<void> {
    if (this.#closing) return this.#closing;
    this.#closed = true;
    // Units already under way (waiting for a connection included) finish on the open pool; new ones are CLOSED.
    const idle = this.#holds === 0 ? Promise.resolve() : new Promise<void>((resolve) => (this.#released = resolve));
    this.#closing = (this.#schema ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => idle)
      .then(() => {
        this.pool.off("acquire", this.#hear);
        return this.#owned ? this.pool.end() : undefined;
      });
    return this.#closing;
  }

  async vacuum(): Promise<void> {
    if (this.#readonly) throw readOnly();
    // VACUUM runs outside a transaction; naming the tables leaves other applications' tables alone.
    await this.#plain(`VACUUM ${TABLES.join(", ")}`);
  }

  databaseFiles(): string[] {
    return [];
  }

  async sizeBytes(): Promise<number> {
    const [row] = await this.#plain<{ bytes: number }>(
      `SELECT coalesce(sum(pg_total_relation_size(to_regclass(t))), 0)::float8 AS bytes FROM unnest($1::text[]) t`,
      [TABLES],
    );
    return row!.bytes;
  }

  /** Every table's rows, each table by its primary key, read in one snapshot. */
  async dump(): Promise<string> {
    const client = await this.#connect();
    try {
      await client.query(BEGIN_READ);
      const tables = [...TABLES, MIGRATIONS_TABLE];
      // Each table's primary key, in key order, for all tables in one query; then every table's rows in one round trip.
      const keys = await client.query<{ order: string }>({
        text: `SELECT (SELECT string_agg('"' || a.attname || '"', ', ' ORDER BY array_position(i.indkey::int2[], a.attnum))
          FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
          WHERE i.indrelid = t.name::regclass AND i.indisprimary) AS "order"
          FROM unnest($1::text[]) WITH ORDINALITY AS t(name, n) ORDER BY t.n`,
        values: [tables],
        types: this.#types,
      });
      const selects = tables.map((table, i) => {
        const order = keys.rows[i]?.order;
        if (!order) throw new Error(`${table} has no primary key to order its rows by`);
        return `SELECT * FROM ${table} ORDER BY ${order}`;
      });
      const results = (await client.query({ text: selects.join(";\n"), types: this.#types })) as unknown as { rows: unknown[] }[];
      const out: Record<string, unknown[]> = {};
      tables.forEach((table, i) => (out[table] = results[i]!.rows));
      await client.query("COMMIT");
      return JSON.stringify(out);
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw translate(error);
    } finally {
      this.#release(client);
    }
  }

  /** One statement on a pooled connection, outside any transaction. */
  async #plain<R>(text: string, values: unknown[] = []): Promise<R[]> {
    const client = await this.#connect();
    try {
      return (await client.query({ text, values, types: this.#types })).rows as R[];
    } catch (error) {
      throw translate(error);
    } finally {
      this.#release(client);
    }
  }
}
