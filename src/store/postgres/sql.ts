// Queries as steps: each yields the promise of one query on the unit's client and is resumed with its result. Round
// trips are what a unit costs on a network: inserts whose results the unit does not read wait, and go as one
// prepared statement ahead of its next statement or its COMMIT. Statements whose results the unit does not read
// (BEGIN, those inserts) are sent without waiting for their answers: on a pipelining client (`pipeline: true`) they
// share a round trip with the statement after them; on any other the driver queues them in the same order.
import { createHash } from "node:crypto";
import type { ClientBase, CustomTypesConfig, QueryArrayResult, QueryConfig, QueryResult } from "pg";
import { runAsync, runSync, type HeadRow, type Step, type WriteScope } from "../port/index.js";
import { planned, type Insert, type Statement, type Waiting } from "./batch.js";
import { CURRENT_OF, currentFromTuple, frozen, type CurrentCache, type Known, type Seen } from "./current.js";

/** A statement that may change rows (a read that only mentions such a word is taken as one: the cost is a read). */
const WRITES = /\b(INSERT|UPDATE|DELETE|MERGE|TRUNCATE)\b/i;

/**
 * What is known of a statement by its text: its name (a named statement is parsed and planned once per connection,
 * then only bound) and whether it may write.
 */
const statements = new Map<string, { name: string; writes: boolean }>();

function statementOf(text: string): { name: string; writes: boolean } {
  let known = statements.get(text);
  if (known === undefined)
    statements.set(text, (known = { name: `fp_${createHash("sha1").update(text).digest("hex").slice(0, 24)}`, writes: WRITES.test(text) }));
  return known;
}

/** A query's config, with its row mode when its rows are read as arrays. */
type Config = QueryConfig & { rowMode?: "array" };

/** One unit's queries: every statement of a unit goes through the client it holds. */
export class Sql {
  readonly #client: ClientBase;
  readonly #types: CustomTypesConfig;
  /** The unit's BEGIN (with its lock statements), until its first statement goes. */
  #begin: string | null = null;
  /** Writes whose results the unit does not read, not sent yet. */
  #waiting: Waiting[] = [];
  /** Whether anything of this unit reached the server (a unit that sent nothing has nothing to commit). */
  #sent = false;
  /** Whether the client pipelines (`pipeline: true`): statements go without waiting for the answers before them. */
  readonly #pipelined: boolean;
  /** Whether statements are named (prepared once per connection): not behind a transaction-mode pooler. */
  readonly #named: boolean;
  /** What the store knows of sessions' current state (see current.ts). */
  readonly current: CurrentCache;
  /** Whether this unit is a write transaction. */
  #writing = false;
  /** Sessions whose current state this unit read (from the server or from `current`), by id. */
  readonly #seen = new Map<string, Seen>();
  /** Whether this unit wrote anything but entries and checkpoints (then what is known of its sessions is read again). */
  #dirty = false;
  /** Sessions' state as read ahead of this unit's COMMIT (undefined: the session is gone). */
  readonly #learned = new Map<string, unknown[] | undefined>();
  /** Statements sent whose answers nobody awaited yet, in the order sent. */
  #inFlight: Promise<unknown>[] = [];

  constructor(client: ClientBase, types: CustomTypesConfig, current: CurrentCache, named = true) {
    this.#named = named;
    this.#client = client;
    this.#types = types;
    this.current = current;
    this.#pipelined = (client as { pipeline?: unknown }).pipeline === true;
  }

  /** Starts a unit: `begin` is sent ahead of its first statement (a unit that sends none opens no transaction). */
  start(begin: string | null, writing = false): void {
    this.#begin = begin;
    this.#waiting = [];
    this.#sent = false;
    this.#inFlight = [];
    this.#writing = writing;
    // Emptied, not made anew: a connection runs one unit at a time, and nothing keeps them past `settle`.
    this.#seen.clear();
    this.#dirty = false;
    this.#learned.clear();
  }

  /**
   * Whether a read of a session's current state may be answered from `current`: in a write unit on a pipelining client,
   * as its first statement (later ones must see what the unit itself wrote, so they read).
   */
  get speculates(): boolean {
    return this.#writing && this.#pipelined && !this.#sent && this.#waiting.length === 0 && this.#seen.size === 0;
  }

  /** Notes what this write unit read of a session's current state (`assumed`: from the cache, unread). */
  see(sessionId: string, known: Known, assumed: boolean): void {
    if (this.#writing) this.#seen.set(sessionId, { known, head: undefined, lastCheckpointAt: undefined, assumed });
  }

  /** Notes an entry this unit writes: on a session's current branch, it is that branch's new head. */
  wroteEntry(branchId: string, head: HeadRow): void {
    for (const seen of this.#seen.values()) {
      const top = seen.head ?? seen.known.row.last;
      if (seen.known.row.branch.id === branchId && (top === undefined || head.position > top.position)) seen.head = head;
    }
  }

  /** Notes a checkpoint this unit writes: the session's newest. */
  wroteCheckpoint(sessionId: string, createdAt: number): void {
    const seen = this.#seen.get(sessionId);
    if (seen) seen.lastCheckpointAt = createdAt;
  }

  /**
   * After the unit: what it read and wrote becomes what the store knows, if it committed having written nothing but
   * entries and checkpoints; otherwise what is known of its sessions (of all, for a unit across sessions) is dropped,
   * except that a session whose check failed (`stale`) stays known as contested, and a session read ahead of the
   * unit's COMMIT is known as read.
   */
  settle(committed: boolean, scope?: WriteScope, stale = false): void {
    if (committed && !this.#dirty) {
      for (const [id, { known, head, lastCheckpointAt }] of this.#seen) {
        const session = lastCheckpointAt === undefined ? known.row.session : { ...known.row.session, lastCheckpointAt };
        this.current.set(id, frozen({ ...known, row: { ...known.row, session, last: head ?? known.row.last } }));
      }
      return;
    }
    if (!committed && !this.#dirty && this.#seen.size === 0) return;
    if (scope === undefined || "global" in scope) this.current.clear();
    else for (const id of "sessionId" in scope ? [scope.sessionId] : scope.sessionIds) this.current.forget(id);
    for (const [id, { known, assumed }] of this.#seen)
      if (stale && assumed) this.current.set(id, frozen({ ...known, contested: true }));
      else this.current.forget(id);
    if (committed)
      for (const [id, tuple] of this.#learned) if (tuple) this.current.set(id, frozen({ ...currentFromTuple(tuple), contested: false }));
  }

  /**
   * Ends a unit: sends what still waits, then COMMIT (on a pipelining client in one write to the socket). A write unit
   * that changed more than entries and checkpoints of a session in `scope` also reads the session's state, in the same
   * round trip, ahead of COMMIT: after the commit it is what the store knows (see `settle`).
   */
  async commit(scope?: WriteScope): Promise<void> {
    if (!this.#sent && this.#waiting.length === 0) return;
    if (!this.#pipelined) {
      await runAsync(this.#flush());
      return void (await this.#settle(this.#client.query("COMMIT")));
    }
    const learn = this.#writing && this.#dirty && scope !== undefined && !("global" in scope);
    const reads: [string, Promise<QueryArrayResult>][] = [];
    const commit = this.#corked(() => {
      runSync(this.#flush());
      if (learn)
        for (const id of "sessionId" in scope ? [scope.sessionId] : new Set(scope.sessionIds)) {
          const read = this.#client.query(this.#config(CURRENT_OF, [id], "array")) as unknown as Promise<QueryArrayResult>;
          this.#send(read);
          reads.push([id, read]);
        }
      return this.#client.query("COMMIT");
    });
    await this.#settle(commit);
    for (const [id, read] of reads) this.#learned.set(id, (await read).rows[0]);
  }

  /**
   * `send`'s statements in one write to the socket: a pipelining client writes each statement as it is queued, and
   * every write wakes the server (a system call and a context switch each, the largest client cost of a turn).
   */
  #corked<R>(send: () => R): R {
    const stream = (this.#client as { connection?: { stream?: { cork?(): void; uncork?(): void } } }).connection?.stream;
    stream?.cork?.();
    try {
      return send();
    } finally {
      stream?.uncork?.();
    }
  }

  /**
   * Whether what the unit sent has all been answered and nothing waits to be sent, on a client that pipelines: then its
   * COMMIT may trail (a statement still to send, such as a write refused in a read unit, must fail the unit first).
   */
  get settled(): boolean {
    return this.#pipelined && this.#waiting.length === 0 && this.#inFlight.length === 0;
  }

  /** After a failure: whether the server holds an open transaction of this unit to roll back. */
  get open(): boolean {
    this.#waiting = [];
    this.#inFlight = [];
    return this.#sent;
  }

  /** Sends the writes that wait and waits for every answer (a unit outside a transaction ends with it). */
  *flush(): Step<void> {
    yield* this.#flush();
    if (this.#inFlight.length > 0) yield this.#settle(Promise.resolve());
  }

  /**
   * Sends the BEGIN and the writes that wait: on a pipelining client without waiting for their answers; on any other
   * one after another (the driver deprecates queueing a query behind one that has not answered).
   */
  *#flush(): Step<void> {
    const statements: (string | Statement)[] = [];
    if (this.#begin !== null) statements.push(this.#begin);
    this.#begin = null;
    if (this.#waiting.length > 0) statements.push(...planned(this.#waiting));
    this.#waiting = [];
    for (const st of statements) {
      // Nothing reads these answers: no result parsers (and the driver copies a config object it is given per query).
      const answer = this.#client.query(typeof st === "string" ? st : this.#unread(st.text, st.values));
      this.#send(answer);
      if (!this.#pipelined) yield this.#settle(answer);
    }
  }

  /** A statement on its way whose answer is awaited later, by `#settle`. */
  #send(answer: Promise<unknown>): void {
    this.#sent = true;
    // Observed by #settle; a unit that fails earlier leaves it to the rollback, not to an unhandled rejection.
    answer.catch(() => undefined);
    this.#inFlight.push(answer);
  }

  /** `answer`, once every statement sent before it has answered: the first failure in the order sent is the unit's. */
  async #settle<R>(answer: Promise<R>): Promise<R> {
    answer.catch(() => undefined);
    const before = this.#inFlight;
    this.#inFlight = [];
    for (const earlier of before) await earlier;
    return answer;
  }

  #config(text: string, values: unknown[], rowMode?: "array"): Config {
    // Unnamed behind a transaction-mode pooler: a named statement lives on a server connection other clients get next.
    if (rowMode === undefined)
      return this.#named ? { name: statementOf(text).name, text, values, types: this.#types } : { text, values, types: this.#types };
    return this.#named
      ? { name: statementOf(text).name, text, values, types: this.#types, rowMode }
      : { text, values, types: this.#types, rowMode };
  }

  /** A statement whose answer nobody reads: no result parsers. */
  #unread(text: string, values: unknown[]): Config {
    return this.#named ? { name: statementOf(text).name, text, values } : { text, values };
  }

  /**
   * A write whose result the unit does not read: sent with the unit's next statement or its COMMIT. `keepsCurrent`:
   * the write leaves every session's current state as it was, or says how it changed it (`wroteEntry`).
   */
  *later(statement: string | Insert, values: unknown[] = [], keepsCurrent = false): Step<void> {
    if (!keepsCurrent) this.#dirty = true;
    this.#waiting.push({ statement, values });
  }

  /** Runs one prepared statement, after what waits (a statement is parsed and planned once per connection). */
  *#query<R extends QueryResult | QueryArrayResult>(text: string, values: unknown[], rowMode?: "array"): Step<R> {
    if (statementOf(text).writes) this.#dirty = true;
    const config = this.#config(text, values, rowMode);
    const query = () => this.#client.query(config);
    let answer: Promise<QueryResult | QueryArrayResult>;
    if (this.#pipelined)
      answer = this.#corked(() => {
        runSync(this.#flush());
        return query();
      });
    else {
      yield* this.#flush();
      answer = query();
    }
    this.#sent = true;
    return (yield this.#settle(answer)) as R;
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
