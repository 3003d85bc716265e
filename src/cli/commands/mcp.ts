// `forkpoint mcp`: serves one workspace directory's checkpoints to an MCP client, over stdio or streamable HTTP.
import { mkdirSync, readFileSync } from "node:fs";
import { userInfo } from "node:os";
import { dirname, join, resolve } from "node:path";
import { InvalidArgumentError, Option, type Command } from "commander";
import type { Forkpoint } from "../../index.js";
import { parseDuration } from "../../models/duration.js";
import type { FilesDiffer } from "../../mcp/files-diff.js";
import { CliError, type Cli } from "../cli.js";
import { loadTools } from "../load-tools.js";
import { cliLogger } from "../logger.js";
import { redacted } from "../open.js";
import { escapeText } from "../output.js";
import { examples, listening, port } from "../options.js";

interface McpOptions {
  workspace: string;
  user?: string;
  session?: string;
  exclude?: string[];
  http?: boolean;
  port?: number;
  diffTimeout: number;
}

/** A token given in FORKPOINT_MCP_TOKEN (so a client's configuration survives a restart) must be hard to guess. */
const MIN_TOKEN_LENGTH = 32;

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** How long a comparison of files (diff, plan_rollback) may run by default before it is stopped. */
const DIFF_TIMEOUT = "20s";
/** The longest: a timer's limit is 24.8 days, and no client waits an hour for a tool's answer. */
const MAX_DIFF_TIMEOUT_MS = 3_600_000;

function diffTimeout(value: string): number {
  let millis: number;
  try {
    millis = parseDuration(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
  if (millis > MAX_DIFF_TIMEOUT_MS) throw new InvalidArgumentError(`must be at most 1h, got ${JSON.stringify(value)}`);
  return millis;
}

/** The owner: `--user`, else $FORKPOINT_USER, else the login name (what `forkpoint sessions -u` then takes). */
function ownerOf(cli: Cli, o: McpOptions): string {
  if (o.user) return o.user;
  if (cli.io.env.FORKPOINT_USER) return cli.io.env.FORKPOINT_USER;
  try {
    return userInfo().username || "local";
  } catch {
    return "local";
  }
}

/** A line on stderr, escaped (it holds names and paths): in stdio mode stdout carries the protocol and nothing else. */
const note = (cli: Cli, line: string) => cli.io.stderr.write(`forkpoint mcp: ${escapeText(line)}\n`);

async function run(cli: Cli, o: McpOptions): Promise<void> {
  if (o.port !== undefined && !o.http) cli.usage("--port needs --http");
  // Over stdio there is no token to check: a FORKPOINT_MCP_TOKEN set for an HTTP server elsewhere changes nothing.
  const token = o.http ? cli.io.env.FORKPOINT_MCP_TOKEN || undefined : undefined;
  // A client sends it in a header, whose value HTTP trims: one that begins or ends with whitespace could never match.
  if (token !== undefined && token.trim() !== token)
    cli.usage("FORKPOINT_MCP_TOKEN must not begin or end with whitespace (an HTTP header cannot carry it)");
  if (token !== undefined && token.length < MIN_TOKEN_LENGTH)
    cli.usage(`FORKPOINT_MCP_TOKEN must be at least ${MIN_TOKEN_LENGTH} characters`);
  const pg = cli.postgresStore;
  const postgres = pg?.postgres;
  // The directory is checked before any database is opened (and so created).
  const { realDirectory, WorkspaceSessionError } = await import("../../mcp/workspace-session.js");
  try {
    realDirectory(o.workspace);
  } catch (error) {
    throw error instanceof WorkspaceSessionError ? new CliError(error.message, { code: "WORKSPACE_REFUSED" }) : error;
  }
  const { defaultDatabasePath } = await import("../../mcp/data-dir.js");
  const dataFile = defaultDatabasePath(cli.io.env);
  const path = cli.options.db ?? (cli.io.env.FORKPOINT_DB || dataFile);
  const where = postgres === undefined ? resolve(path) : redacted(postgres);
  if (postgres === undefined && path !== ":memory:") mkdirSync(dirname(resolve(path)), { recursive: true });
  const tools = cli.options.tools ? await loadTools(cli.options.tools) : [];
  const { openForkpoint } = await import("../../index.js");
  // Created when absent, on either store: the MCP server is where a coding agent's first checkpoint comes from.
  const store = pg ?? { path };
  const fp = openForkpoint({ ...store, logger: cliLogger(cli.io.stderr), ...(tools.length > 0 ? { tools } : {}) });
  // Files are compared in a worker thread of the server's (its own handle on the same database): see files-diff.ts.
  const { inThreadDiffer, workerDiffer } = await import("../../mcp/files-diff.js");
  const files =
    path === ":memory:" && postgres === undefined
      ? inThreadDiffer
      : workerDiffer({ store: pg ?? { path: resolve(path) }, timeoutMs: o.diffTimeout });
  const setting: Setting = {
    database: where,
    databaseArgs: postgres === undefined ? ["--db", where] : ["--postgres", where, ...cli.postgresArgs],
    lockDir: join(dirname(dataFile), "locks"),
    token,
    files,
  };
  try {
    await serve(cli, fp, o, setting);
  } finally {
    await files.close();
    await fp.close();
  }
}

/** Where the server runs: its database (as shown, and as a command names it), its lock files, token and file comparer. */
interface Setting {
  database: string;
  databaseArgs: string[];
  lockDir: string;
  token: string | undefined;
  files: FilesDiffer;
}

async function serve(cli: Cli, fp: Forkpoint, o: McpOptions, setting: Setting): Promise<void> {
  const { workspaceSession, WorkspaceSessionError } = await import("../../mcp/workspace-session.js");
  const { createMcpServer } = await import("../../mcp/server.js");
  const { database, token, files } = setting;
  const userId = ownerOf(cli, o);
  const ws = await workspaceSession(fp, {
    dir: o.workspace,
    userId,
    ...(o.session ? { sessionId: o.session } : {}),
    ...(o.exclude ? { exclude: o.exclude } : {}),
    lockDir: setting.lockDir,
    databaseArgs: setting.databaseArgs,
  }).catch((error: unknown) => {
    throw error instanceof WorkspaceSessionError ? new CliError(error.message, { code: "WORKSPACE_REFUSED" }) : error;
  });
  const version = (JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string }).version;
  // The owner, the directory and the database are anyone's text: escaped as the CLI escapes what it prints.
  const about = escapeText(
    `session ${ws.session.id} (user ${userId}) for ${ws.dir}${ws.attached ? ", just attached" : ""}; database ${database}`,
  );
  if (ws.excludeChanged) note(cli, `the workspace had no checkpoint yet: attached again with the exclude list ${ws.exclude.join(" ")}`);

  if (!o.http) {
    const { serveStdio } = await import("../../mcp/stdio.js");
    const { movesSettled } = await import("../../mcp/move-gate.js");
    note(cli, `${about}; serving on stdio`);
    return serveStdio(createMcpServer(ws.session, version, files, ws.exclude), process.stdin, () => movesSettled(ws.session));
  }

  const { startMcpHttpServer } = await import("../../mcp/http.js");
  const { movesSettled } = await import("../../mcp/move-gate.js");
  const http = await listening(o.port, () =>
    startMcpHttpServer({
      serverFor: () => createMcpServer(ws.session, version, files, ws.exclude),
      settling: () => movesSettled(ws.session),
      port: o.port ?? 0,
      ...(token ? { token } : {}),
      onError: (error) => note(cli, `a request failed: ${error instanceof Error ? error.message : String(error)}`),
    }),
  );
  cli.out.print(
    { url: http.url, port: http.port, token: http.token, sessionId: ws.session.id, userId, workspace: ws.dir, database },
    () => [
      `forkpoint mcp: ${http.url}`,
      `token: ${http.token}`,
      `  (send it as the header "Authorization: Bearer <token>"; FORKPOINT_MCP_TOKEN sets a token of your own)`,
      about,
      "Ctrl-C stops it.",
    ],
  );
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  await http.close();
}

export function mcpCommand(program: Command, cli: Cli): void {
  const command = program
    .command("mcp")
    .description("serve a workspace directory's checkpoints to an MCP client (a coding agent, an IDE): stdio, or HTTP with --http")
    .requiredOption("-w, --workspace <dir>", "the directory to checkpoint and rewind")
    .option("-u, --user <userId>", "the owner (default: $FORKPOINT_USER, else your login name)")
    .option("-s, --session <id>", "the session to use (default: the one of this directory and user, made on first use)")
    .option(
      "--exclude <pattern>",
      "a .gitignore-style pattern to leave out (repeatable; fixed once the workspace has a checkpoint; .git never captured)",
      collect,
    )
    .option("--http", "serve streamable HTTP on 127.0.0.1 instead of stdio (a token is required on every request)")
    .option("--port <n>", "with --http: the port (default: a free one)", port)
    .addOption(
      new Option("--diff-timeout <duration>", "how long diff and plan_rollback may compare files before they give up")
        .argParser(diffTimeout)
        .default(diffTimeout(DIFF_TIMEOUT), DIFF_TIMEOUT),
    )
    .addHelpText(
      "after",
      `
The database defaults to $XDG_DATA_HOME/forkpoint/forkpoint.db (~/.local/share/forkpoint/forkpoint.db), outside the
workspace; --db, --postgres, FORKPOINT_DB or FORKPOINT_POSTGRES choose another. docs/mcp.md (in the package) has client configurations.`,
    );
  examples(command, [
    "forkpoint mcp --workspace .",
    "forkpoint mcp --workspace ~/code/app --exclude 'dist/' --exclude '*.log'",
    "forkpoint mcp --workspace ~/code/app --http --port 7433",
  ]);
  command.action((o: McpOptions) => run(cli, o));
}
