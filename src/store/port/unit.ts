// Units of work: engine bodies written as generators, driven synchronously on SQLite and asynchronously elsewhere.
import type { CallsTx } from "./calls.js";
import type { CheckpointsTx } from "./checkpoints.js";
import type { EntriesTx } from "./entries.js";
import type { LangGraphTx } from "./langgraph.js";
import type { MovesTx } from "./moves.js";
import type { RequestsTx } from "./requests.js";
import type { SessionsTx } from "./sessions.js";
import type { WorkspacesTx } from "./workspaces.js";

/**
 * One store call, or an engine body made of them: `yield*` it to get its value. A synchronous store's steps never
 * yield; an asynchronous store's steps yield the promises of their queries and are resumed with what they resolve to.
 */
export type Step<T> = Generator<Promise<unknown>, T, unknown>;

/** A unit's body: every read and write goes through `tx`. */
export type Body<T> = (tx: Tx) => Step<T>;

/**
 * What a write unit locks. SQLite locks the whole database whatever the scope; a shared database locks one session
 * (or several, in a stable order), or everything for operator calls that cross sessions.
 */
export type WriteScope = { sessionId: string } | { sessionIds: readonly string[] } | { global: true };

/** The transaction handle every engine read and write goes through, one area per interface. */
export interface Tx extends SessionsTx, EntriesTx, CallsTx, CheckpointsTx, MovesTx, WorkspacesTx, RequestsTx {
  /** `ForkpointSaver`'s tables: LangGraph threads, checkpoints, channel values and pending writes. */
  readonly langgraph: LangGraphTx;
}

/** Where stores differ in what they can do (Kysely's capability flags). */
export interface StoreCapabilities {
  /** "process": an owner is a live process on this host (one file); "lease": an owner holds a renewable lease. */
  readonly ownership: "process" | "lease";
  /** Files on the database's own host: a workspace must not snapshot them. */
  readonly local: boolean;
}

export interface Store {
  readonly capabilities: StoreCapabilities;
  /** Runs `body` in a write transaction holding `scope`'s lock from its first statement on; rolls back when it throws. */
  write<T>(scope: WriteScope, body: Body<T>): Promise<T>;
  /** Runs `body` in a read transaction: one consistent snapshot. */
  read<T>(body: Body<T>): Promise<T>;
  /** Runs `body`, a single-statement read, without a transaction (one statement is its own snapshot). */
  query<T>(body: Body<T>): Promise<T>;
  close(): Promise<void>;
  readonly closed: boolean;
  /** True while a unit of work runs on this handle and its caller is inside it (a synchronous store's body). */
  readonly inUnit: boolean;
  /** A synchronous store's read, run at once and returning its value; absent on asynchronous stores. */
  readNow?<T>(body: Body<T>): T;

  /** Gives free space back to the file system (SQLite VACUUM); outside any unit of work. */
  vacuum(): Promise<void>;
  /** Absolute paths of the database's own files (none in memory or on a server): a workspace never snapshots them. */
  databaseFiles(): string[];
  /** Bytes the database takes. */
  sizeBytes(): Promise<number>;
  /** Every row of every table, for integrity checks and tests ("the database is unchanged"). */
  dump(): Promise<string>;
}

/** Runs a step to its end on a synchronous store: one whose calls never yield. */
export function runSync<T>(step: Step<T>): T {
  const next = step.next();
  if (!next.done) throw new Error("a synchronous store's unit of work waited on a promise");
  return next.value;
}

/** Runs a step to its end, awaiting each promise it yields and resuming it with the value (or the error). */
export async function runAsync<T>(step: Step<T>): Promise<T> {
  let next = step.next();
  while (!next.done) {
    let value: unknown;
    try {
      value = await next.value;
    } catch (error) {
      next = step.throw(error);
      continue;
    }
    next = step.next(value);
  }
  return next.value;
}
