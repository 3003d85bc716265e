// forkpoint's tables in PostgreSQL, for the calls that visit each (dump, size, vacuum); a test keeps it equal to schema.ts.
export const TABLES = [
  "applied",
  "branches",
  "call_paths",
  "checkpoint_files",
  "checkpoint_holds",
  "checkpoint_metadata",
  "checkpoints",
  "entries",
  "events",
  "file_blobs",
  "file_manifests",
  "file_packs",
  "file_trees",
  "imported_calls",
  "lg_blobs",
  "lg_checkpoints",
  "lg_threads",
  "lg_writes",
  "move_history",
  "move_steps",
  "moves",
  "replay_results",
  "requests",
  "running_calls",
  "sessions",
  "set_aside",
  "state_snapshots",
  "tool_results",
  "workspace_stats",
  "workspaces",
] as const;

/**
 * forkpoint's migration history, which the dump includes (as SQLite's does): in drizzle's schema, in a table of its own
 * (drizzle.postgres.config.ts names it to drizzle-kit), never drizzle's default `__drizzle_migrations`, which an app's
 * own drizzle migrations use.
 */
export const MIGRATIONS_SCHEMA = "drizzle";
export const MIGRATIONS_TABLE_NAME = "__forkpoint_migrations";
export const MIGRATIONS_TABLE = `${MIGRATIONS_SCHEMA}.${MIGRATIONS_TABLE_NAME}`;
