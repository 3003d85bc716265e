// track: fields of a plain object kept in the session state: saved on demand, loaded back after moves and restores.
import { z } from "zod";
import { ValidationError } from "../models/errors.js";
import { parseOptions } from "../models/inputs.js";
import { setOwn, toJsonText, type JsonObject, type JsonValue } from "../models/json.js";
import type { MoveResult } from "../models/types.js";
import type { EngineContext } from "./core/context.js";
import type { StateUpdate } from "./set-state.js";

export const trackOptions = z.strictObject({
  /** The object's fields kept in the state (own properties holding JSON values). */
  fields: z.array(z.string().min(1).max(200)).min(1).max(1000),
  /** Keep them under this key of the state instead of at its top level. */
  key: z.string().min(1).max(200).optional(),
});

/** Options of `track`. */
export type TrackOptions = z.input<typeof trackOptions>;

/** What a tracked object needs of its session. */
export interface TrackTarget {
  readonly id: string;
  getState(): Promise<JsonValue>;
  setState(next: StateUpdate): Promise<JsonValue>;
}

/** A tracked object: `save()` writes its fields to the state; moves and restores load them back into it. */
export interface Tracked<T extends object> {
  readonly target: T;
  /** Writes the tracked fields into the session state (one `setState`; other keys are kept); returns the new state. */
  save(): Promise<JsonValue>;
  /** Loads the tracked fields from the session's current state into the object (moves and restores do it themselves). */
  load(): Promise<void>;
  /** Detaches: moves and restores no longer load into the object. */
  stop(): void;
}

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/** A tracked object's part in loading: pending loads after a move, and loading from a state already read. */
interface Loader {
  apply(state: JsonValue): void;
  pending: Promise<void> | null;
}

/**
 * Per engine and session, the tracked objects of this process: moves anywhere in it load them. Keyed by the engine's
 * emitter, which every handle of one Forkpoint shares (a handle with its own state schema has a context of its own).
 */
const registries = new WeakMap<object, Map<string, Set<Loader>>>();
const MOVES = ["rollback", "edit", "switch", "undoMove", "redoMove"] as const;

function registry(ctx: EngineContext): Map<string, Set<Loader>> {
  let map = registries.get(ctx.events);
  if (!map) {
    const sessions = new Map<string, Set<Loader>>();
    registries.set(ctx.events, (map = sessions));
    // One listener per engine: a finished move of a session with tracked objects loads its new state into them.
    const onMove = (move: MoveResult) => {
      const loaders = sessions.get(move.branch.sessionId);
      if (!loaders) return;
      const read: Promise<void> = readStateOf(ctx, loaders).finally(() => {
        // Done: a later move that starts no load of its own (see `settleTracked`) reads the state afresh.
        for (const l of loaders) if (l.pending === read) l.pending = null;
      });
      for (const l of loaders) l.pending = read;
    };
    for (const name of MOVES) ctx.events.on(name, onMove);
  }
  return map;
}

/** The loaders are fed from one read, made through a tracker's own session (any of them: they share the session). */
const readers = new WeakMap<Loader, () => Promise<JsonValue>>();
function readStateOf(ctx: EngineContext, loaders: ReadonlySet<Loader>): Promise<void> {
  const first = [...loaders][0]!;
  return readers.get(first)!()
    .then((state) => {
      for (const l of loaders) l.apply(state);
    })
    .catch((error: unknown) => ctx.logger.error("forkpoint: loading tracked objects after a move failed", error));
}

/**
 * Waits for the loads a move of this session started (the session handle's moves resolve after them). A move that
 * finds the session where it goes (a rollback to the head's checkpoint, a switch to the current branch, an atomic
 * block's rollback with nothing written) emits no event and starts none: with `reload`, the objects not loading read
 * the state now, so that a change not saved goes as it goes with any move. A files-only move leaves the state: no reload.
 */
export async function settleTracked(ctx: EngineContext, sessionId: string, reload: boolean): Promise<void> {
  const loaders = registries.get(ctx.events)?.get(sessionId);
  if (!loaders) return;
  const idle = new Set([...loaders].filter((l) => l.pending === null));
  const fresh = reload && idle.size > 0 ? readStateOf(ctx, idle) : null;
  await Promise.all([...[...loaders].map((l) => l.pending), fresh]);
}

/** Whether this process tracks objects of the session (a move then loads them). */
export function hasTracked(ctx: EngineContext, sessionId: string): boolean {
  return (registries.get(ctx.events)?.get(sessionId)?.size ?? 0) > 0;
}

/** Loads `state` (a restored checkpoint's) into this session's tracked objects. */
export function loadTracked(ctx: EngineContext, sessionId: string, state: JsonValue): void {
  for (const l of registries.get(ctx.events)?.get(sessionId) ?? []) l.apply(state);
}

/**
 * Tracks `fields` of `target`. Saved, they are top-level keys of the session state (or of `state[key]`), which must
 * then be an object (another state is replaced by one). Loaded, each field takes the state's value; where the state
 * holds none of the fields (a position before the first save), each takes the value it had when tracking began; a
 * field with no value (not saved, as the object lacked it then) is removed.
 */
export function track<T extends object>(ctx: EngineContext, session: TrackTarget, target: T, options: TrackOptions): Tracked<T> {
  if (typeof target !== "object" || target === null) throw new ValidationError("target", "must be an object");
  const o = parseOptions(trackOptions, options, "options");
  const fields = [...new Set(o.fields)];
  const obj = target as Record<string, unknown>;
  // What a field is reset to where the state holds none: its value now (JSON, as any saved one). A field the object
  // does not have is none, also when Object.prototype has a member of that name (`toString`, `__proto__`).
  const asJson = (f: string): JsonValue | undefined => {
    const value = fieldOf(obj, f) === "none" ? undefined : obj[f];
    return value === undefined ? undefined : (JSON.parse(toJsonText(value, `target.${f}`, ctx.limits)) as JsonValue);
  };
  const initial = new Map(fields.map((f) => [f, asJson(f)]));
  const sessions = registry(ctx);
  const loader: Loader = {
    pending: null,
    apply(state) {
      const holder = o.key === undefined ? state : isObject(state) ? state[o.key] : undefined;
      const saved = isObject(holder) ? holder : {};
      // Each field is loaded whatever another's does (a setter that throws): the first failure is rethrown after.
      let failed: unknown = null;
      // Saved at that position (some field is there): a field it lacks was none when saved. Else the position is from
      // before the first save, and each field takes its value from when tracking began.
      const savedThere = fields.some((f) => Object.hasOwn(saved, f));
      for (const f of fields) {
        const value = Object.hasOwn(saved, f) ? structuredClone(saved[f]) : savedThere ? undefined : structuredClone(initial.get(f));
        const kind = fieldOf(obj, f);
        // Derived (a getter without a setter, a read-only field): saved as it reads, never set.
        if (kind === "derived") continue;
        // No value for a field the object has as its own data: the field goes (the inherited member, if any, shows).
        if (value === undefined && kind !== "accessor") {
          if (kind === "own") delete obj[f];
          continue;
        }
        try {
          // A field named "__proto__" is the object's own (an assignment would set its prototype); others are
          // assigned, so a setter the target defines still runs.
          if (f === "__proto__") setOwn(obj, f, value);
          else obj[f] = value;
        } catch (error) {
          failed ??= error;
        }
      }
      if (failed !== null) throw failed;
    },
  };
  readers.set(loader, () => session.getState());
  let loaders = sessions.get(session.id);
  if (!loaders) sessions.set(session.id, (loaders = new Set()));
  loaders.add(loader);
  return {
    target,
    async save() {
      // Read and checked now (before any await), so that a change made after `save()` is called is not what it saves.
      const snapshot: JsonObject = {};
      for (const f of fields) {
        const value = asJson(f);
        if (value !== undefined) setOwn(snapshot, f, value);
      }
      return session.setState((prev) => {
        const base = isObject(prev) ? prev : {};
        if (o.key === undefined) {
          const rest = Object.fromEntries(Object.entries(base).filter(([k]) => !fields.includes(k)));
          return { ...rest, ...snapshot };
        }
        return { ...base, [o.key]: snapshot };
      });
    },
    async load() {
      loader.apply(await session.getState());
    },
    stop() {
      const set = sessions.get(session.id);
      set?.delete(loader);
      if (set?.size === 0) sessions.delete(session.id);
    },
  };
}

/**
 * How `obj` has field `f`: as its own writable data ("own"); through a setter, or a member of its own class's
 * prototype that an assignment shadows ("accessor"); as a getter without a setter or a read-only field ("derived": never
 * set); or not at all ("none": Object.prototype's members are no fields of the object).
 */
function fieldOf(obj: object, f: string): "own" | "accessor" | "derived" | "none" {
  for (let o: object | null = obj; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o) as object | null) {
    const d = Object.getOwnPropertyDescriptor(o, f);
    if (!d) continue;
    if (d.get || d.set) return d.set ? "accessor" : "derived";
    if (o === obj) return d.writable ? "own" : "derived";
    return "accessor";
  }
  return "none";
}
