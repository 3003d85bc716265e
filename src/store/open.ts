// Picks and opens the store openForkpoint's options name: the one place that knows which drivers exist.
import { ValidationError } from "../models/errors.js";
import type { StoreOpenOptions } from "./open-options.js";
import type { Store } from "./port/index.js";
import { PostgresStore } from "./postgres/store.js";
import { SqliteStore } from "./sqlite/store.js";

/** Opens the options' store: the caller's own, a PostgreSQL database, or (by default) the SQLite file. */
export function openStore(o: StoreOpenOptions & { readonly?: boolean }, onWarning: (message: string, cause: unknown) => void): Store {
  if ([o.store, o.path, o.postgres].filter((v) => v !== undefined).length > 1)
    throw new ValidationError("options", "give one of path, postgres or store");
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
