// forkpoint's tables in PostgreSQL, for the calls that visit each (dump, size, vacuum); a test keeps it equal to schema.ts.
export const TABLES = [
  "applied",
  "branches",
  "checkpoint_files",
  "checkpoint_metadata",
  "checkpoints",
  "entries",
  "events",
  "file_blobs",
  "file_manifests",
  "imported_calls",
  "lg_blobs",
  "lg_checkpoints",
  "lg_threads",
  "lg_writes",
  "move_history",
  "move_steps",
  "moves",
  "sessions",
  "state_snapshots",
  "tool_results",
  "workspaces",
] as const;

/** The migration history, which the dump includes (as SQLite's does). */
export const MIGRATIONS_TABLE = "drizzle.__drizzle_migrations";
