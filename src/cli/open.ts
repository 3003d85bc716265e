// Opening the database for a command: reads open it read-only and never create it; only import and demo create one.
import { existsSync } from "node:fs";
import type { Forkpoint, ToolDefinition } from "../index.js";
import { CliError, type Cli } from "./cli.js";
import { loadTools } from "./load-tools.js";
import { cliLogger } from "./logger.js";

type Mode =
  /** Read-only: a missing file is an error, and nothing is written (not even recovery). */
  | "read"
  /** Writable, but the file must exist already. */
  | "write"
  /** Writable, created when absent (import, demo). */
  | "create";

const missing = (path: string) =>
  new CliError(`no database at ${path} (give --db or FORKPOINT_DB; only import and demo create one)`, { code: "NO_DATABASE" });
const noSchema = (url: string) =>
  new CliError(`no forkpoint database at ${url}: it has no forkpoint schema (only import and demo create one)`, { code: "NO_DATABASE" });

/** Opens the database in `mode` with the `--tools` module's tools, runs `fn`, and closes it. */
export async function withForkpoint<T>(
  cli: Cli,
  mode: Mode,
  fn: (fp: Forkpoint) => Promise<T>,
  extraTools: ToolDefinition[] = [],
): Promise<T> {
  const pg = cli.postgresStore;
  const postgres = pg?.postgres;
  const path = cli.dbPath;
  // Checked first for every mode but "create": the engine refuses a read-only open of a missing file too, but a
  // writable open would create it.
  if (postgres === undefined && mode !== "create" && path !== ":memory:" && !existsSync(path)) throw missing(path);
  const tools = [...extraTools, ...(cli.options.tools ? await loadTools(cli.options.tools) : [])];
  // Loaded here, not at startup: the engine (driver, schemas, drizzle) is most of what `forkpoint --help` would load.
  const { openForkpoint } = await import("../index.js");
  // A read-only open leaves a database at rest as it found it (its close gives back the -wal and -shm files); on
  // PostgreSQL it writes nothing (no migration, no recovery).
  // A writable open migrates: on PostgreSQL, a database without forkpoint's schema (the app's, or a mistyped name)
  // is refused first, as a missing file is, unless the command creates one.
  if (pg !== undefined && mode === "write") await assertForkpointDatabase(openForkpoint, pg);
  const store = pg ?? { path };
  const fp = openForkpoint({
    ...store,
    readonly: mode === "read",
    logger: cliLogger(cli.io.stderr),
    ...(tools.length > 0 ? { tools } : {}),
  });
  try {
    return await fn(fp);
  } finally {
    await fp.close();
  }
}

/** Throws the "no database" usage error unless `postgres` holds forkpoint's schema (read through a read-only handle). */
async function assertForkpointDatabase(
  open: typeof import("../index.js").openForkpoint,
  store: { postgres: string; preparedStatements?: false },
): Promise<void> {
  const postgres = store.postgres;
  const reader = open({ ...store, readonly: true });
  try {
    await reader.listUsers({ limit: 1 });
  } catch (error) {
    if ((error as { code?: unknown }).code === "NOT_A_DATABASE") throw noSchema(redacted(postgres));
    throw error;
  } finally {
    await reader.close();
  }
}

/** A connection string fit for a message: its password left out, in the user info and in the query (`?password=`). */
export function redacted(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    if (u.searchParams.has("password")) u.searchParams.set("password", "***");
    return u.toString();
  } catch {
    return "the PostgreSQL database";
  }
}
