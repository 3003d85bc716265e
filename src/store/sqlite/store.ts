// The SQLite store: one better-sqlite3 connection, units of work run to their end synchronously (no other JavaScript
// runs inside a transaction, so handles of one process never wait on each other's open transaction).
import type Database from "better-sqlite3";
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { DatabaseError } from "../../models/errors.js";
import { runSync, type Body, type Store, type StoreCapabilities, type Tx, type WriteScope } from "../port/index.js";
import { callsTx } from "./calls.js";
import { checkpointsTx } from "./checkpoints.js";
import { entriesTx } from "./entries.js";
import { translate } from "./errors.js";
import { langgraphTx } from "./langgraph.js";
import { movesTx } from "./moves.js";
import { requestsTx } from "./requests.js";
import { openDatabase, type OpenDatabaseOptions } from "./open.js";
import { sessionsTx } from "./sessions.js";
import { EventLoopTurns } from "./event-loop-turns.js";
import { WalCheckpointer } from "./wal-checkpointer.js";
import { hasWalFiles, releaseWalFiles } from "./wal-files.js";
import { workspacesTx } from "./workspaces.js";

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Folds the WAL into the file and empties it. A checkpoint already running (the `walWorker`'s) makes TRUNCATE give
 * up at once rather than wait, so it is retried for up to a second: the worker's checkpoints take milliseconds.
 * A reader in another process makes each attempt wait the busy timeout first, so the bound is time, not attempts.
 */
function truncateWal(db: Database.Database): void {
  const deadline = Date.now() + 1_000;
  for (;;) {
    const [result] = db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
    if (!result?.busy || Date.now() >= deadline) return;
    Atomics.wait(pause, 0, 0, 5);
  }
}

const CAPABILITIES: StoreCapabilities = { ownership: "process", local: true };

export class SqliteStore implements Store {
  readonly capabilities = CAPABILITIES;
  readonly db: Database.Database;
  /** Checkpoints the WAL on a worker thread when asked to (`walWorker`); never for read-only and in-memory databases. */
  readonly checkpointer: WalCheckpointer | undefined;
  /** One handle for every unit: units never overlap on a synchronous connection. */
  readonly #tx: Tx;
  readonly #statements: {
    begin: Database.Statement;
    beginRead: Database.Statement;
    commit: Database.Statement;
    rollback: Database.Statement;
  };
  readonly #turns = new EventLoopTurns();
  #closed = false;
  #closing: Promise<void> | undefined;
  /** A read-only open of a database at rest (no -wal or -shm beside it): its close gives those files back. */
  readonly #releaseWalFiles: (() => void) | undefined;

  constructor(options: OpenDatabaseOptions) {
    const atRest = options.readonly && options.path !== ":memory:" && !hasWalFiles(options.path);
    this.db = openDatabase(options);
    if (atRest) this.#releaseWalFiles = () => releaseWalFiles(options.path);
    if (options.walWorker && !options.readonly && options.path !== ":memory:") {
      this.checkpointer = new WalCheckpointer(this.db, { everyWrites: 32, startAfterWrites: 256, onFailure: options.onWarning });
    }
    const db = this.db;
    this.#tx = {
      ...sessionsTx(db),
      ...entriesTx(db),
      ...callsTx(db),
      ...checkpointsTx(db),
      ...movesTx(db),
      ...workspacesTx(db),
      ...requestsTx(db),
      langgraph: langgraphTx(db),
    };
    this.#statements = {
      begin: db.prepare("BEGIN IMMEDIATE"),
      beginRead: db.prepare("BEGIN"),
      commit: db.prepare("COMMIT"),
      rollback: db.prepare("ROLLBACK"),
    };
  }

  get closed(): boolean {
    return this.#closed;
  }

  get inUnit(): boolean {
    return this.db.inTransaction;
  }

  readNow<T>(body: Body<T>): T {
    return this.#unit(this.#statements.beginRead, body);
  }

  #open(): void {
    if (this.#closed) throw new DatabaseError("CLOSED", "the forkpoint database is closed");
  }

  #unit<T>(begin: Database.Statement, body: Body<T>): T {
    this.#open();
    // A body is synchronous here: a unit started inside another is an engine bug, never joined silently.
    if (this.db.inTransaction) throw new Error("forkpoint: a unit of work started inside another");
    try {
      begin.run();
    } catch (error) {
      throw translate(error);
    }
    try {
      const value = runSync(body(this.#tx));
      this.#statements.commit.run();
      return value;
    } catch (error) {
      if (this.db.inTransaction) this.#statements.rollback.run();
      throw translate(error);
    }
  }

  async write<T>(_scope: WriteScope, body: Body<T>): Promise<T> {
    const turn = this.#turns.due();
    if (turn) await turn;
    // One writer at a time for the whole file: BEGIN IMMEDIATE, whatever the scope.
    const value = this.#unit(this.#statements.begin, body);
    this.checkpointer?.committed();
    return value;
  }

  async read<T>(body: Body<T>): Promise<T> {
    const turn = this.#turns.due();
    if (turn) await turn;
    return this.#unit(this.#statements.beginRead, body);
  }

  async query<T>(body: Body<T>): Promise<T> {
    this.#open();
    try {
      return runSync(body(this.#tx));
    } catch (error) {
      throw translate(error);
    }
  }

  /** Synchronous unless the checkpoint worker runs: its connection closes first, so the writer's close folds the WAL back. */
  close(): Promise<void> {
    if (this.#closing) return this.#closing;
    this.#closed = true;
    const stopping = this.checkpointer?.close();
    if (!stopping) {
      this.db.close();
      this.#releaseWalFiles?.();
    }
    this.#closing = stopping ? stopping.finally(() => this.db.close()) : Promise.resolve();
    return this.#closing;
  }

  async vacuum(): Promise<void> {
    this.#open();
    try {
      this.db.exec("VACUUM");
      if (!this.db.memory) truncateWal(this.db);
    } catch (error) {
      throw translate(error);
    }
  }

  async sizeBytes(): Promise<number> {
    this.#open();
    if (this.db.memory) {
      return (this.db.pragma("page_count", { simple: true }) as number) * (this.db.pragma("page_size", { simple: true }) as number);
    }
    const wal = `${this.db.name}-wal`;
    return statSync(this.db.name).size + (existsSync(wal) ? statSync(wal).size : 0);
  }

  databaseFiles(): string[] {
    if (this.db.memory) return [];
    const main = resolve(this.db.name);
    return [main, `${main}-wal`, `${main}-shm`, `${main}-journal`];
  }

  async dump(): Promise<string> {
    this.#open();
    const tables = this.db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
      .all() as { name: string }[];
    const out: Record<string, unknown[]> = {};
    for (const { name } of tables) out[name] = this.db.prepare(`SELECT * FROM "${name}" ORDER BY rowid`).all();
    return JSON.stringify(out);
  }
}
