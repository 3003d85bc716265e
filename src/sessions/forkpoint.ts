// openForkpoint and the Forkpoint object: the database, the tools, per-user listings and recovery.
import { listCheckpoints } from "./list-checkpoints.js";
import { listSessions, type ListAllSessionsInput } from "./list-sessions.js";
import { z } from "zod";
import { DatabaseError } from "../models/errors.js";
import {
  idSchema,
  parseInput,
  userScope,
  type CreateSessionInput,
  type ListCheckpointsInput,
  type ListSessionsInput,
  parseOptions,
} from "../models/inputs.js";
import { DEFAULT_LIMITS } from "../models/limits.js";
import { resilientLogger } from "../models/logger.js";
import { requireSupportedNode } from "../models/runtime.js";
import type { SessionExport } from "../models/session-export.js";
import type { Checkpoint, Page, SessionListItem } from "../models/types.js";
import type { Store } from "../store/port/index.js";
import { gatedContext } from "./core/gate.js";
import { insideHandler } from "../tools/handler-scope.js";
import { ToolRegistry } from "../tools/registry.js";
import { monotonicClock } from "./core/clock.js";
import type { EngineContext } from "./core/context.js";
import { engineLifecycle } from "./core/lifecycle.js";
import { keyedLock } from "./core/session-lock.js";
import { LandingWrites } from "./core/landing-writes.js";
import { ListenerSafeEmitter } from "./core/events.js";
import { EVENT_NAMES, type ForkpointEvent, type ForkpointListener } from "./forkpoint-events.js";
import { engineOptions, stateSchemaOf, type EngineOptions } from "./core/open-options.js";
import { withSessionState, type SessionStateOptions } from "./core/session-state.js";
import { clone } from "./clone.js";
import { createSession } from "./create-session.js";
import { deleteSession } from "./delete-session.js";
import { deleteUser, type DeleteUserOptions, type DeleteUserReport } from "./delete-user.js";
import { exportSession, type ExportOptions } from "./export-session.js";
import { getCheckpoint } from "./get-checkpoint.js";
import { getSession } from "./get-session.js";
import { recover } from "./recover.js";
import { importSession, type ImportOptions } from "./import-session.js";
import { listUsers, type ListUsersInput, type UserInfo } from "./list-users.js";
import { ownershipFor } from "./core/ownership.js";
import { recoveryAtOpen } from "./maintenance/recovery-at-open.js";
import type { RecoveryReport } from "./moves/recovery.js";
import { resumingOwnMoves } from "./moves/resuming-lock.js";
import { prune, type PruneOptions, type PruneReport } from "./prune.js";
import { SessionHandle, type WhenReady } from "./session-handle.js";
import { verify, type VerifyOptions, type VerifyReport } from "./verify.js";

// Where the consumer's lib has no `Symbol.asyncDispose` (ES2022 without @types/node), `Forkpoint`'s declaration still
// compiles; @types/node and lib "esnext.disposable" declare the same.
declare global {
  interface SymbolConstructor {
    readonly asyncDispose: unique symbol;
  }
}

/** A misspelt event name would never fire: refused, naming the ones there are. */
const eventName = z.enum(EVENT_NAMES as [ForkpointEvent, ...ForkpointEvent[]], {
  error: `must be one of ${EVENT_NAMES.map((e) => `"${e}"`).join(", ")}`,
});
const listenerFn = z.custom<(payload: unknown) => void>((v) => typeof v === "function", "must be a function");

/** What integrations in this package (the LangGraph saver) reach through a `Forkpoint`: not public API. */
export interface EngineAccess {
  ctx: EngineContext;
  /** Waits for recovery at open; throws once closed. */
  guard: () => Promise<void>;
}
const engines = new WeakMap<Forkpoint, EngineAccess>();

/** @internal The engine behind a `Forkpoint` (for `forkpoint/langgraph`). */
export function engineOf(fp: Forkpoint): EngineAccess {
  const access = engines.get(fp);
  if (!access) throw new TypeError("expected a Forkpoint from openForkpoint()");
  return access;
}

/** How the engine gets its store from the composition root: the checks of the store's options, and its opener. */
export interface StoreOpener {
  /** Checks of the store's own options, merged with the engine's into openForkpoint's one strict schema. */
  readonly options: z.ZodRawShape;
  /**
   * Opens the store from openForkpoint's validated options, once they are known to be valid (a bad option opens
   * nothing); `warn` is told what a store wants logged but no call can throw.
   */
  open(options: Record<string, unknown>, warn: (message: string, cause: unknown) => void): Store;
}

/** openForkpoint's one strict schema per opener: the engine's options and the store's. */
const schemas = new WeakMap<StoreOpener, z.ZodObject>();
function optionsSchema(opener: StoreOpener): z.ZodObject {
  let schema = schemas.get(opener);
  if (!schema) schemas.set(opener, (schema = z.strictObject({ ...engineOptions, ...opener.options })));
  return schema;
}

/** An open forkpoint database. Create with `openForkpoint`. */
export class Forkpoint {
  readonly #ctx: EngineContext;
  readonly #store: Store;
  readonly #ready: Promise<void>;
  readonly #lifecycle = engineLifecycle();

  /** @internal use `openForkpoint`, which gives the engine its store (src/store/open.ts picks the driver). */
  constructor(options: EngineOptions, opener: StoreOpener) {
    requireSupportedNode();
    const parsed = parseOptions(optionsSchema(opener), options, "options");
    const o = parsed as z.output<z.ZodObject<typeof engineOptions>>;
    const stateSchema = stateSchemaOf(o.stateVersion, o.migrateState);
    const tools = new ToolRegistry(o.tools ?? []);
    const logger = resilientLogger(o.logger ?? console);
    this.#store = opener.open(parsed, logger.warn);
    const events = new ListenerSafeEmitter(logger);
    const engine: EngineContext = {
      store: this.#store,
      limits: { ...DEFAULT_LIMITS, ...o.limits },
      stateSchema,
      tools,
      autoCheckpoint: o.autoCheckpoint ?? {},
      // The store's option: another process's call holds the session as its lock holds the database.
      busyWaitMs: (parsed as { busyTimeoutMs?: number }).busyTimeoutMs ?? 15_000,
      events,
      logger,
      now: monotonicClock(),
      withSessionLock: resumingOwnMoves(keyedLock(), () => engine),
      closing: this.#lifecycle.closing,
      track: this.#lifecycle.track,
      landing: new LandingWrites(),
      ownership: ownershipFor(this.#store.capabilities, o.leaseMs),
      ...(o.readonly ? { readonly: true } : {}),
    };
    // From inside a tool handler (recovery at open runs some), waiting for recovery could be waiting on itself.
    this.#ctx = gatedContext(engine, () => (this.#settled() || insideHandler() ? null : this.#ready));
    const recovery = recoveryAtOpen(engine, this.#store, (o.recover ?? true) && !o.readonly, logger);
    this.#ready = recovery.ready;
    this.#settled = recovery.settled;
    engines.set(this, { ctx: this.#ctx, guard: this.#guard });
  }

  #guard = async (): Promise<void> => {
    await this.#ready;
    if (this.#store.closed) throw new DatabaseError("CLOSED", "the forkpoint database is closed");
  };

  /** Whether recovery at open has finished: calls then start at once. */
  readonly #settled: () => boolean;

  /**
   * `fn` at once, so that it takes its inputs as the call is made; while recovery at open runs, its units of work and
   * session locks wait for it (the gated context).
   */
  #whenReady: WhenReady = <T>(fn: () => Promise<T>): Promise<T> => {
    if (this.#store.closed) return this.#guard().then(fn);
    // Made from inside a transaction (a setState updater calling the API): it runs once that one has committed, as
    // its own, not joined to it.
    if (this.#store.inUnit) return Promise.resolve().then(fn);
    try {
      return fn();
    } catch (error) {
      return Promise.reject(error);
    }
  };

  /** Resolves once interrupted moves found at open have been resumed. */
  get ready(): Promise<void> {
    return this.#ready;
  }

  /**
   * Creates a session (and its root branch) owned by `userId`. With `stateVersion` / `migrateState`, the handle writes
   * and reads states under that schema instead of the Forkpoint's (see `SessionStateOptions`).
   */
  createSession(input: CreateSessionInput & SessionStateOptions): Promise<SessionHandle> {
    return this.#whenReady(async () => {
      const { ctx, rest } = withSessionState(this.#ctx, input);
      return new SessionHandle(ctx, await createSession(this.#ctx, rest), this.#whenReady);
    });
  }

  /**
   * A handle on an existing session of `userId`; unknown ids and other users' sessions are `NotFoundError`. With
   * `stateVersion` / `migrateState`, the handle's own state schema (see `SessionStateOptions`).
   */
  getSession(sessionId: string, scope: { userId: string } & SessionStateOptions): Promise<SessionHandle> {
    return this.#whenReady(async () => {
      const { ctx, ref } = await getSession(this.#ctx, sessionId, scope);
      return new SessionHandle(ctx, ref, this.#whenReady);
    });
  }

  /**
   * Deletes a session of `userId` and everything it recorded: branches, messages, state changes, tool calls,
   * checkpoints, journals and timeline events (and, for a LangGraph thread, its saver rows). Other sessions handed off
   * from it keep their copy. State documents and file contents it alone used are reclaimed by `prune`.
   * A session with a move in progress is a `ConflictError` (`MOVE_IN_PROGRESS`).
   * @example await fp.deleteSession(s.id, { userId: "alice" });
   */
  deleteSession(sessionId: string, scope: { userId: string }): Promise<void> {
    return this.#whenReady(async () => {
      const id = parseInput(idSchema, sessionId, "sessionId");
      const { userId } = parseOptions(userScope, scope, "scope");
      await deleteSession(this.#ctx, { id, userId });
    });
  }

  /**
   * Deletes every session of `userId` and everything they recorded, as `deleteSession` does for one (branches,
   * messages, tool calls, checkpoints, requests, workspace records, LangGraph and OpenAI Agents rows). An operator call
   * (a user's "delete my data"): not scoped to a caller's user. Sessions go a batch at a time, each batch in one
   * transaction, so a user with thousands of sessions never holds the database long; an interrupted call leaves whole
   * sessions and is finished by calling it again (an unknown user, or one with nothing left, is `{ sessions: 0 }`).
   * Sessions the user creates while it runs are not included. A session with a move in progress is kept while the
   * others go, and the call rejects with `ConflictError` `MOVE_IN_PROGRESS`. Takes `signal` and `onProgress` (units:
   * the user's sessions as counted at the start). State documents and file contents are reclaimed by `prune`.
   * @example const { sessions } = await fp.deleteUser("alice", { onProgress: ({ done, total }) => console.log(done, total) });
   */
  deleteUser(userId: string, options: DeleteUserOptions = {}): Promise<DeleteUserReport> {
    return this.#whenReady(() => deleteUser(this.#ctx, userId, options));
  }

  /**
   * A user's sessions, newest first, each with what a sidebar row shows: its current branch's last message (a preview)
   * and message count, read with the page in one statement. With `{ all: true }` instead of a `userId`: every user's
   * sessions, an operator listing (not scoped to a user, like `verify` and `prune`).
   * @example const { items } = await fp.listSessions({ userId: "alice", limit: 20 });
   * items[0]?.lastMessage?.preview; // "Sure: three hotels near the station…"
   */
  listSessions(input: ListSessionsInput | ListAllSessionsInput): Promise<Page<SessionListItem>> {
    return this.#whenReady(() => listSessions(this.#ctx, input));
  }

  /**
   * The users that own sessions, by id, each with how many sessions and when one was last updated. An operator
   * listing: not scoped to a user.
   * @example const { items, nextCursor } = await fp.listUsers({ limit: 100 });
   */
  listUsers(input: ListUsersInput = {}): Promise<Page<UserInfo>> {
    return this.#whenReady(() => listUsers(this.#ctx, input));
  }

  /**
   * One checkpoint of `userId`, by its id alone, as listings show it; unknown ids, expired checkpoints and other
   * users' are `NotFoundError`. Its `sessionId` leads to the session (`getSession`, then `restore`).
   * @example const cp = await fp.getCheckpoint(id, { userId: "alice" });
   */
  getCheckpoint(checkpointId: string, scope: { userId: string }): Promise<Checkpoint> {
    return this.#whenReady(() => getCheckpoint(this.#ctx, checkpointId, scope));
  }

  /** A user's checkpoints across sessions, newest first; filter by session, name, time window, auto. */
  listCheckpoints(input: ListCheckpointsInput): Promise<Page<Checkpoint>> {
    return this.#whenReady(() => listCheckpoints(this.#ctx, input));
  }

  /**
   * The whole session (branches, messages, state changes, tool calls with their completions, states, checkpoints,
   * timeline events) as one JSON document, verified first. Deterministic: the same session gives the same document
   * and `JSON.stringify` gives the same bytes. The owner, the applied set and the move journal are not included.
   * A LangGraph thread's session also carries the thread (`langgraph`: its checkpoints, channel values and pending
   * writes; document version 2), so that the graph goes on where it was wherever it is imported.
   * Takes `signal` and `onProgress` (units: entries and checkpoints); an abort is an `AbortedError`.
   * @example const doc = await fp.exportSession(s.id, { userId: "alice" });
   */
  exportSession(sessionId: string, scope: ExportOptions): Promise<SessionExport> {
    return this.#whenReady(() => exportSession(this.#ctx, sessionId, scope));
  }

  /**
   * Writes an exported session back, ids and times kept, owned by `userId`. The document's links and hashes are
   * checked (what the hashes cover: entries, states, tool-call completions, checkpoints; the title, metadata, names,
   * events and origin are taken as given: see docs/operations.md); an id that already exists, or a LangGraph thread `userId` has already, refuses the whole import
   * (`ConflictError`). Nothing of it is applied.
   * Takes `signal` and `onProgress` (units: the document's entries, states and checkpoints); an abort before the final
   * write is an `AbortedError` and writes nothing. States newer than the schema the handle reads under (the
   * Forkpoint's, or the `stateVersion` given here, as to `createSession`) refuse it (`StateVersionError`).
   * @example const copy = await other.importSession(doc, { userId: "alice" });
   */
  importSession(document: SessionExport, scope: ImportOptions & SessionStateOptions): Promise<SessionHandle> {
    return this.#whenReady(async () => {
      const { ctx, rest } = withSessionState(this.#ctx, scope);
      return new SessionHandle(ctx, await importSession(ctx, document, rest), this.#whenReady);
    });
  }

  /**
   * Copies a session (history, state, the whole branch tree, checkpoints) under new ids for the same user; nothing is
   * applied. The source gets a checkpoint named "clone" marking what was copied; the copy's `info().origin` points at it.
   * With `stateVersion` / `migrateState`, the copy's handle reads and writes states under that schema, as `getSession`'s.
   * @example const copy = await fp.clone(s.id, { userId: "alice" });
   */
  clone(sessionId: string, scope: { userId: string } & SessionStateOptions): Promise<SessionHandle> {
    return this.#whenReady(async () => {
      const { ctx, rest } = withSessionState(this.#ctx, scope);
      return new SessionHandle(ctx, await clone(ctx, sessionId, rest), this.#whenReady);
    });
  }

  /**
   * Finishes moves and workspace restores interrupted by a crash (this also runs at open), and lists tool calls a
   * crash left running. Reports what it resumed, what must wait, and the calls whose outcome is unknown.
   */
  recover(): Promise<RecoveryReport> {
    // As every call: from a handler that recovery at open runs, waiting for that recovery would wait on itself.
    return this.#whenReady(() => recover(this.#ctx));
  }

  /**
   * Recomputes every hash chain, tool completion, state snapshot and checkpoint checksum of one session or
   * of the whole database (like `git fsck`). An operator call: not scoped to a user. Takes `signal` and `onProgress`
   * (units: entries and checkpoints); an abort is an `AbortedError`.
   */
  verify(input: VerifyOptions = {}): Promise<VerifyReport> {
    return this.#whenReady(() => verify(this.#ctx, input));
  }

  /**
   * Drops what no read reaches any more: expired checkpoints (of one session, or all), state documents nothing points
   * at, journals of finished moves; then rebuilds the file to give the space back (`vacuum: false` skips that).
   * An operator call: not scoped to a user. Emits "prune" with the report. Takes `signal` and `onProgress` (units:
   * steps, one transaction each); an abort is an `AbortedError`, and the steps done before it stay done.
   * @example const { checkpoints, bytesBefore, bytesAfter } = await fp.prune();
   */
  prune(input: PruneOptions = {}): Promise<PruneReport> {
    return this.#whenReady(() => prune(this.#ctx, input));
  }

  /**
   * Subscribes to an event; the payload is typed per event (`ForkpointEvents`). Only this Forkpoint's own changes are
   * heard: another handle's, process's or app server's are not (read `timeline()` or `info()` for those). Listeners
   * run synchronously once the change is committed. One that throws (or an async one that rejects) is reported to the `logger` and the others
   * still run: the call that emitted resolves, since its change is stored.
   * @example fp.on("rollback", (move) => console.log(move.branch.id, move.undone.length));
   */
  on<E extends ForkpointEvent>(event: E, listener: ForkpointListener<E>): this {
    this.#ctx.events.on(parseInput(eventName, event, "event"), parseInput(listenerFn, listener, "listener"));
    return this;
  }

  /** Unsubscribes a listener. */
  off<E extends ForkpointEvent>(event: E, listener: ForkpointListener<E>): this {
    this.#ctx.events.off(parseInput(eventName, event, "event"), parseInput(listenerFn, listener, "listener"));
    return this;
  }

  /**
   * Closes the database after interrupted moves have been resumed. Running tool handlers' signals are aborted first
   * and the engine stops waiting for them (their calls and moves, and the calls and moves waiting for such a move,
   * reject with `DatabaseError` `CLOSED`). A handler may go on and finish after that, so what it was doing is left as a
   * crash there would leave it: a call stays running, its outcome unknown (listed by `recover()`, settled with
   * `resolveToolCall`); a move stays journaled with that step running, and the next opener's recovery reports the step
   * unknown and never runs it again. While such a move's handler still runs, other handles' writes on its session wait
   * for it (`MOVE_IN_PROGRESS`), as other processes' do, so its late effect never lands over theirs. A move's steps not
   * yet started stay pending (not failed), for the next call or recovery to run once. Idempotent.
   */
  async close(): Promise<void> {
    const closed = new DatabaseError(
      "CLOSED",
      "the forkpoint database was closed while the tool ran: its outcome is unknown until resolveToolCall records it",
    );
    await this.#lifecycle.shutdown(closed);
    await this.#ready;
    await this.#lifecycle.shutdown(closed);
    await this.#store.close();
  }

  /** `await using fp = openForkpoint(...)` closes the database when the block ends, as `close()` does. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
