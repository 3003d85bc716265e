// Opening the database for a command: reads open it read-only and never create it; only import and demo create one.
import { existsSync } from "node:fs";
import type { Forkpoint, ToolDefinition } from "../index.js";
import { CliError, type Cli } from "./cli.js";
import { loadTools } from "./load-tools.js";

type Mode =
  /** Read-only: a missing file is an error, and nothing is written (not even recovery). */
  | "read"
  /** Writable, but the file must exist already. */
  | "write"
  /** Writable, created when absent (import, demo). */
  | "create";

const missing = (path: string) => new CliError(`no database at ${path} (give --db or FORKPOINT_DB; only import and demo create one)`);

/** Opens the database in `mode` with the `--tools` module's tools, runs `fn`, and closes it. */
export async function withForkpoint<T>(
  cli: Cli,
  mode: Mode,
  fn: (fp: Forkpoint) => Promise<T>,
  extraTools: ToolDefinition[] = [],
): Promise<T> {
  const postgres = cli.postgresUrl;
  const path = cli.dbPath;
  // Checked first for every mode but "create": the engine refuses a read-only open of a missing file too, but a
  // writable open would create it.
  if (postgres === undefined && mode !== "create" && path !== ":memory:" && !existsSync(path)) throw missing(path);
  const tools = [...extraTools, ...(cli.options.tools ? await loadTools(cli.options.tools) : [])];
  // Loaded here, not at startup: the engine (driver, schemas, drizzle) is most of what `forkpoint --help` would load.
  const { openForkpoint } = await import("../index.js");
  // A read-only open leaves a database at rest as it found it (its close gives back the -wal and -shm files); on
  // PostgreSQL it writes nothing (no migration, no recovery).
  const store = postgres === undefined ? { path } : { postgres };
  const fp = openForkpoint({ ...store, readonly: mode === "read", ...(tools.length > 0 ? { tools } : {}) });
  try {
    return await fn(fp);
  } finally {
    await fp.close();
  }
}
