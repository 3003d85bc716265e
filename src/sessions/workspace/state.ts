// The workspaces this forkpoint has open: per session, the stat cache (loaded from the database once) and the watcher
// that says what changed since the last scan, kept until the forkpoint closes. A scan brings the cache up to date:
// with a trusted watcher it looks only at the paths events named; otherwise it walks the whole tree (stat only:
// files are read when their stat data changed).
import { createRequire } from "node:module";
import type { StatRow, Step, Tx, WorkspaceRow } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { ignoreFileText } from "./ignore-file.js";
import { PackWriter } from "./packs.js";
import { makeRules, type Rules } from "./rules.js";
import { StatCache } from "./stat-cache.js";
import { refreshLinked, refreshPaths, relistDir, walkTree, type ScanContext } from "./walk.js";
import { Watch, watchableFileSystem } from "./watch.js";

// Loaded on first use: only sessions with a workspace need it (ignore alone adds about 6 MB of RSS when loaded).
const load = createRequire(import.meta.url);
let ignoreModule: typeof import("ignore") | undefined;
export const ignoreFactory = (options: { ignorecase: boolean }) => (ignoreModule ??= load("ignore") as typeof import("ignore"))(options);

/** What a workspace's files are read under: its directory and ignore rules. */
export type WorkspaceConfig = Pick<WorkspaceRow, "sessionId" | "dir" | "exclude" | "gitignore">;

const configKey = (c: Pick<WorkspaceConfig, "dir" | "exclude" | "gitignore">) => `${c.dir}\0${c.exclude}\0${c.gitignore}`;

/** Buffered contents are written once they reach this much (memory stays bounded whatever the tree's size). */
const FLUSH_BYTES = 2 << 20;

export class WorkspaceState {
  readonly key: string;
  cache: StatCache;
  /** The cache reflects a whole walk made while the watcher (if any) already ran: its events since say what changed. */
  walked = false;
  /** Whole walks made (the others looked only at what the watcher named). */
  walks = 0;
  watch: Watch | null = null;
  /** Whether a watcher may be used here (Linux, a local file system, watches in place). */
  watchable: boolean;
  /** Paths synced from the watcher and not yet looked at (a scan that failed midway leaves the rest here). */
  readonly pending = { dirty: new Set<string>(), trees: new Set<string>(), relist: new Set<string>() };
  rules: Rules | null = null;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly config: WorkspaceConfig,
    cache: StatCache,
  ) {
    this.key = configKey(config);
    this.cache = cache;
    this.watchable = watchableFileSystem(config.dir);
  }

  /** Runs `fn` alone among this workspace's scans and captures. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  close(): void {
    this.watch?.close();
    this.watch = null;
  }
}

interface Registry {
  states: Map<string, WorkspaceState>;
}
const registries = new WeakMap<AbortSignal, Registry>();

function registryOf(ctx: EngineContext): Registry {
  let r = registries.get(ctx.closing);
  if (!r) {
    const made: Registry = { states: new Map() };
    registries.set(ctx.closing, made);
    ctx.closing.addEventListener("abort", () => {
      for (const s of made.states.values()) s.close();
      made.states.clear();
    });
    r = made;
  }
  return r;
}

/**
 * The session's workspace state for `config` (its stat cache loaded from the database the first time; none with
 * `fresh`). A state of another configuration (the session was attached again elsewhere) is dropped.
 */
export async function stateOf(ctx: EngineContext, config: WorkspaceConfig, fresh = false): Promise<WorkspaceState> {
  const known = knownState(ctx, config, fresh);
  if (known) return known;
  const rows = fresh ? [] : await ctx.store.read((tx) => tx.workspaceStats(config.sessionId));
  return knownState(ctx, config, false) ?? newState(ctx, config, rows);
}

/** `stateOf` inside a unit of work (its stat cache read in that transaction). */
export function* stateIn(ctx: EngineContext, tx: Tx, config: WorkspaceConfig): Step<WorkspaceState> {
  return knownState(ctx, config, false) ?? newState(ctx, config, yield* tx.workspaceStats(config.sessionId));
}

function knownState(ctx: EngineContext, config: WorkspaceConfig, fresh: boolean): WorkspaceState | undefined {
  const registry = registryOf(ctx);
  const known = registry.states.get(config.sessionId);
  if (known && known.key === configKey(config) && !fresh) return known;
  known?.close();
  registry.states.delete(config.sessionId);
  return undefined;
}

function newState(ctx: EngineContext, config: WorkspaceConfig, rows: readonly StatRow[]): WorkspaceState {
  const state = new WorkspaceState(
    { sessionId: config.sessionId, dir: config.dir, exclude: config.exclude, gitignore: config.gitignore },
    StatCache.fromRows(rows),
  );
  if (!ctx.closing.aborted) registryOf(ctx).states.set(config.sessionId, state);
  return state;
}

/** The session's workspace state in this forkpoint, if it has one (for tests and diagnostics). */
export function workspaceStateFor(ctx: EngineContext, sessionId: string): WorkspaceState | undefined {
  return registryOf(ctx).states.get(sessionId);
}

export function scanContext(ctx: EngineContext, state: WorkspaceState, writer: PackWriter | null): ScanContext {
  state.rules ??= makeRules(
    state.config.dir,
    JSON.parse(state.config.exclude) as string[],
    state.config.gitignore,
    ignoreFactory,
    ignoreFileText,
  );
  return {
    root: state.config.dir,
    rules: state.rules,
    skip: new Set(ctx.store.databaseFiles()),
    maxBytes: ctx.limits.maxPayloadBytes,
    ...(writer
      ? { store: (hash: string, content: Buffer) => writer.add(hash, content), full: () => writer.pendingBytes >= FLUSH_BYTES }
      : {}),
  };
}

/** Runs a scan generator, storing the writer's buffered contents whenever it yields (its buffer is full), and at its end. */
async function drive(ctx: EngineContext, state: WorkspaceState, writer: PackWriter | null, work: Generator<void>): Promise<void> {
  for (let step = work.next(); !step.done; step = work.next()) if (writer) await writer.persist(ctx.store, state.config.sessionId);
  if (writer) await writer.persist(ctx.store, state.config.sessionId);
}

/**
 * Brings the cache up to date with the directory (see the file's comment). With `writer`, the contents read go to it
 * and are written as they pile up. Run inside `state.exclusive`.
 */
export async function scan(ctx: EngineContext, state: WorkspaceState, writer: PackWriter | null = null): Promise<void> {
  if (state.watchable && !state.watch && !ctx.closing.aborted) {
    try {
      const exclude = JSON.parse(state.config.exclude) as string[];
      state.watch = new Watch(state.config.dir, exclude, state.config.gitignore, ctx.store.databaseFiles());
      if (!(await state.watch.ready())) disableWatch(ctx, state, state.watch.failed);
    } catch (error) {
      state.watchable = false;
      ctx.logger.warn(`forkpoint: the workspace ${state.config.dir} cannot be watched (${(error as Error).message}); every scan walks it`);
    }
    state.walked = false;
  }
  const synced = state.watch ? await state.watch.sync() : null;
  if (synced && !synced.trusted && state.watch) {
    state.walked = false;
    if (!(await state.watch.rescan())) disableWatch(ctx, state, state.watch.failed);
  }
  if (!state.walked || !synced?.trusted) {
    state.walked = false;
    state.rules = null; // .gitignore files are read again
    const sc = scanContext(ctx, state, writer);
    for (const k of Object.values(state.pending)) k.clear();
    const devices = new Map<bigint, string>();
    state.walks++;
    await drive(ctx, state, writer, walkTree(state.cache, { ...sc, devices }, state.cache.root, ""));
    // A file system mounted inside the workspace that is not a local one: its events cannot be trusted.
    for (const path of devices.values())
      if (!watchableFileSystem(path)) disableWatch(ctx, state, `${path} is on a file system whose changes make no events here`);
    state.walked = state.watch !== null;
    return;
  }
  for (const p of synced.dirty) state.pending.dirty.add(p);
  for (const p of synced.trees) state.pending.trees.add(p);
  for (const p of synced.relist) state.pending.relist.add(p);
  const sc = { ...scanContext(ctx, state, writer), newlyLinked: new Set<bigint>() };
  await drive(ctx, state, writer, refreshing(state, sc));
  await drive(ctx, state, writer, refreshLinked(state.cache, sc));
}

/** Looks at the pending paths, each removed once looked at; yields when the writer's buffer is full. */
function* refreshing(state: WorkspaceState, sc: ScanContext): Generator<void> {
  const { dirty, trees, relist } = state.pending;
  for (const rel of [...relist].sort()) {
    yield* relistDir(state.cache, sc, rel);
    relist.delete(rel);
  }
  for (const rel of [...dirty, ...trees].sort()) {
    yield* refreshPaths(state.cache, sc, [rel], trees);
    dirty.delete(rel);
    trees.delete(rel);
  }
}

function disableWatch(ctx: EngineContext, state: WorkspaceState, why: string | null): void {
  if (!state.watch) return;
  state.watch.close();
  state.watch = null;
  state.watchable = false;
  state.walked = false;
  ctx.logger.warn(`forkpoint: watching the workspace ${state.config.dir} failed (${why}); every scan walks it instead`);
}
