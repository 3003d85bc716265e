#!/usr/bin/env node
// The `forkpoint` command: the program, its global options, and exit codes (0 ok, 1 failure, 2 usage).
import { readFileSync, realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Command, CommanderError } from "commander";
// The error classes only: the engine itself loads when a command opens a database, so --help stays quick.
import { ForkpointError, ToolMoveError } from "../models/errors.js";
import { Cli, CliError, processIo, type GlobalOptions, type Io } from "./cli.js";
import { stoppedMoveLines } from "./moves.js";
import { createOutput, escapeText, terminalSafeJson } from "./output.js";
import { checkpointsCommand } from "./commands/checkpoints.js";
import { deleteCommand } from "./commands/delete.js";
import { demoCommand } from "./commands/demo.js";
import { diffCommand } from "./commands/diff.js";
import { editCommand } from "./commands/edit.js";
import { exportCommand } from "./commands/export.js";
import { historyCommand } from "./commands/history.js";
import { importCommand } from "./commands/import.js";
import { mcpCommand } from "./commands/mcp.js";
import { planCommand } from "./commands/plan.js";
import { pruneCommand } from "./commands/prune.js";
import { recoverCommand } from "./commands/recover.js";
import { resolveCommand } from "./commands/resolve.js";
import { rollbackCommand } from "./commands/rollback.js";
import { sessionsCommand } from "./commands/sessions.js";
import { showCommand } from "./commands/show.js";
import { summaryCommand } from "./commands/summary.js";
import { switchCommand } from "./commands/switch.js";
import { redoCommand, undoCommand } from "./commands/undo-redo.js";
import { timelineCommand } from "./commands/timeline.js";
import { treeCommand } from "./commands/tree.js";
import { uiCommand } from "./commands/ui.js";
import { usersCommand } from "./commands/users.js";
import { verifyCommand } from "./commands/verify.js";
import { versionsCommand } from "./commands/versions.js";

/** package.json sits two levels up from this file, in src/cli/ and in dist/cli/ alike. */
const version = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

/** Builds the program; commands print through `io` (tests run the real binary; this keeps the seams explicit). */
export function buildProgram(io: Io = processIo()): Command {
  const program = new Command("forkpoint");
  // Set before the commands are added, so every subcommand inherits them: errors throw instead of exiting.
  // Commander's errors quote the command line (an unknown command, a bad option value): escaped line by line, as the
  // CLI's own errors are, so that a pasted id cannot drive the terminal and help text keeps its lines.
  program.exitOverride().configureOutput({ writeErr: (text) => io.stderr.write(text.split("\n").map(escapeText).join("\n")) });
  program
    .description("A git-like tree of chat and agent sessions, on SQLite")
    .version(version, "-V, --version")
    .option("-d, --db <path>", "database file (default: $FORKPOINT_DB, else ./forkpoint.db)")
    .option("--postgres <url>", "a PostgreSQL database instead of the file (default: $FORKPOINT_POSTGRES)")
    .option(
      "--no-prepared-statements",
      "on PostgreSQL behind a transaction-mode pooler: name no prepared statement ($FORKPOINT_PREPARED_STATEMENTS=false)",
    )
    .option("--json", "print JSON instead of text (values exact; characters a terminal acts on as \\u escapes)")
    .option("--tools <module>", "a module exporting defineTool definitions: moves undo and replay their calls")
    .showSuggestionAfterError()
    .addHelpText(
      "after",
      `
Reads open the database read-only and never create it; only import and demo do.
Exit codes: 0 ok, 1 failure, 2 usage error.

Examples:
  $ forkpoint demo                                   write a demo database to try every command
  $ forkpoint sessions -u alice
  $ forkpoint tree s_abc -u alice
  $ FORKPOINT_DB=app.db forkpoint --json history s_abc -u alice -n 10
  $ forkpoint rollback s_abc cp_xyz -u alice --tools ./my-tools.js
`,
    );
  const cli = new Cli(program, io);
  for (const add of [
    sessionsCommand,
    usersCommand,
    summaryCommand,
    treeCommand,
    historyCommand,
    checkpointsCommand,
    showCommand,
    diffCommand,
    timelineCommand,
    versionsCommand,
    planCommand,
    rollbackCommand,
    switchCommand,
    editCommand,
    undoCommand,
    redoCommand,
    deleteCommand,
    exportCommand,
    importCommand,
    verifyCommand,
    pruneCommand,
    recoverCommand,
    resolveCommand,
    demoCommand,
    uiCommand,
    mcpCommand,
  ])
    add(program, cli);
  return program;
}

/** A failure's code: the library's, the CLI's own; null for anything else (a bug: INTERNAL under --json). */
function codeOf(error: unknown): string | null {
  return error instanceof ForkpointError || error instanceof CliError ? error.code : null;
}

/**
 * A failure as `--json` prints it on standard output: `{ "error": { code, message } }`, with what the error carries
 * besides (a ValidationError's `field`; a move stopped by a failing handler: `undone`, `replayed`, `failed`,
 * `invocationId`, `tool`; a forced move's `savedDrift`).
 */
function errorJson(error: unknown, code: string | null): { error: Record<string, unknown> } {
  const message = error instanceof Error ? error.message : String(error);
  const extra: Record<string, unknown> = {};
  if (error instanceof ForkpointError) {
    const { field } = error as { field?: unknown };
    if (field !== undefined) extra.field = field;
    if (error instanceof ToolMoveError)
      Object.assign(extra, {
        invocationId: error.invocationId,
        tool: error.tool,
        undone: error.undone,
        replayed: error.replayed,
        failed: error.failed,
      });
    if (error.savedDrift) extra.savedDrift = error.savedDrift;
  }
  return { error: { code: code ?? "INTERNAL", message, ...extra } };
}

/** Whether the command line asked for --json (read from argv when commander stopped before it parsed the options). */
function wantsJson(program: Command, argv: string[]): boolean {
  if (program.opts<GlobalOptions>().json) return true;
  const args = argv.slice(2);
  const end = args.indexOf("--");
  return (end < 0 ? args : args.slice(0, end)).includes("--json");
}

/**
 * Runs the CLI and sets the exit code; a failure prints one line on standard error, `error CODE: message`
 * (FORKPOINT_DEBUG=1 adds the stack). Under --json it prints `{ "error": { code, message, ... } }` on standard output
 * too, usage errors as code USAGE. A move stopped by a failing undo or replay prints what it had done first.
 */
export async function main(argv: string[] = process.argv, io: Io = processIo()): Promise<void> {
  const program = buildProgram(io);
  const output = () => createOutput({ json: wantsJson(program, argv), write: io.out, tty: io.stdoutIsTTY, env: io.env });
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has printed its message (or the help, or the version): 0 for those, 2 for every usage error.
      process.exitCode = error.exitCode === 0 ? 0 : 2;
      if (error.exitCode !== 0 && wantsJson(program, argv))
        io.out(terminalSafeJson({ error: { code: "USAGE", message: error.message.replace(/^error: /, "") } }, 2));
      return;
    }
    const code = codeOf(error);
    const out = output();
    if (out.json) out.print(errorJson(error, code), () => []);
    else if (error instanceof ToolMoveError) out.print(null, () => stoppedMoveLines(out, error));
    const message = error instanceof Error ? error.message : String(error);
    const line = code ? `error ${code}: ${message}` : `error: ${message}`;
    // Messages can quote stored text (a tool's error, an id): escaped like everything the CLI prints.
    io.stderr.write(`${escapeText(line)}\n`);
    // A forced move that failed after saving the drift: where the saved files are (the error's own text does not say).
    const saved = error instanceof ForkpointError ? error.savedDrift : undefined;
    if (saved && !out.json)
      io.stderr.write(
        escapeText(`saved drift: ${saved.files.length} file(s) in checkpoint ${saved.checkpointId}, before this failed`) + "\n",
      );
    if (io.env.FORKPOINT_DEBUG && error instanceof Error && !(error instanceof CliError)) io.stderr.write(`${error.stack}\n`);
    process.exitCode = 1;
  }
}

/** Whether this file is the program being run: npm installs the command as a symlink to it, so paths are compared real. */
function isMain(): boolean {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (isMain()) await main();
