// Picks and opens the store openForkpoint's options name: the one place that knows which drivers exist.
import type { Store } from "./port/index.js";
import type { PostgresTarget } from "./postgres/open.js";
import { PostgresStore } from "./postgres/store.js";
import type { Durability } from "./sqlite/open.js";
import { SqliteStore } from "./sqlite/store.js";

export type { PostgresTarget };

/** What of openForkpoint's (validated) options chooses and opens a store. */
export interface StoreOptions {
  /** A store built elsewhere: used as it is. */
  store?: Store;
  path?: string;
  postgres?: PostgresTarget;
  preparedStatements?: boolean;
  durability?: Durability;
  busyTimeoutMs?: number;
  readonly?: boolean;
  walWorker?: boolean;
}

/** Opens the options' store: the caller's own, a PostgreSQL database, or (by default) the SQLite file. */
export function openStore(o: StoreOptions, onWarning: (message: string, cause: unknown) => void): Store {
  if (o.store) return o.store;
  if (o.postgres !== undefined) {
    return new PostgresStore(o.postgres, { readonly: o.readonly ?? false, preparedStatements: o.preparedStatements ?? true });
  }
  return new SqliteStore({
    path: o.path ?? "./forkpoint.db",
    durability: o.durability ?? "normal",
    busyTimeoutMs: o.busyTimeoutMs ?? 15_000,
    readonly: o.readonly ?? false,
    walWorker: o.walWorker ?? false,
    onWarning,
  });
}
