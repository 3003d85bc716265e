// What every command shares: the global options, where output goes, and the CLI's own failure type.
import type { Command } from "commander";
import { createOutput, type Output } from "./output.js";

/** The program's global options (`--db`, `--postgres`, `--no-prepared-statements`, `--json`, `--tools`), as parsed. */
export interface GlobalOptions {
  db?: string;
  postgres?: string;
  /** False with `--no-prepared-statements`. */
  preparedStatements?: boolean;
  json?: boolean;
  tools?: string;
}

/** Where the CLI writes, and what it knows of its surroundings (tests run it in a child process, as users do). */
export interface Io {
  /** One line on standard output. */
  out: (line: string) => void;
  stdoutIsTTY: boolean;
  stderr: NodeJS.WriteStream;
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
}

/**
 * Lets a reader that stops early (`| head -1`) end the output quietly, as `git log | head` does: a write to a closed
 * pipe is an EPIPE error event, which unhandled would print a stack. Later writes to the stream are skipped.
 */
function quietOnBrokenPipe(stream: NodeJS.WriteStream): () => boolean {
  let broken = false;
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    broken = true;
  });
  return () => broken;
}

export function processIo(): Io {
  const stdoutBroken = quietOnBrokenPipe(process.stdout);
  quietOnBrokenPipe(process.stderr);
  return {
    out: (line) => {
      if (!stdoutBroken()) process.stdout.write(`${line}\n`);
    },
    stdoutIsTTY: Boolean(process.stdout.isTTY),
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
  };
}

/**
 * A failure the CLI itself reports (a missing database, a tools module that does not load): one line
 * `error CODE: message`, exit 1. `code` names it as the library's error codes do (under --json too).
 */
export class CliError extends Error {
  readonly code: string;
  constructor(message: string, options?: { cause?: unknown; code?: string }) {
    super(message, options);
    this.name = "CliError";
    this.code = options?.code ?? "CLI_ERROR";
  }
}

/** The context each command's action runs in. */
export class Cli {
  readonly #program: Command;
  readonly io: Io;
  #output: Output | undefined;

  constructor(program: Command, io: Io) {
    this.#program = program;
    this.io = io;
  }

  get options(): GlobalOptions {
    return this.#program.opts<GlobalOptions>();
  }

  /** `--db`, else `FORKPOINT_DB`, else ./forkpoint.db. */
  get dbPath(): string {
    return this.options.db ?? (this.io.env.FORKPOINT_DB || "./forkpoint.db");
  }

  /**
   * `--postgres`, else `FORKPOINT_POSTGRES` (unless `--db` names a file): the PostgreSQL database to use instead. A flag
   * wins over the environment; two of a kind are a usage error, not a silent choice.
   */
  get postgresUrl(): string | undefined {
    const { db, postgres } = this.options;
    if (postgres !== undefined && db !== undefined) this.usage("give --db or --postgres, not both");
    if (postgres !== undefined || db !== undefined) return postgres;
    const { FORKPOINT_DB: file, FORKPOINT_POSTGRES: url } = this.io.env;
    if (file && url) this.usage("FORKPOINT_DB and FORKPOINT_POSTGRES are both set: give --db or --postgres to choose");
    return url || undefined;
  }

  /**
   * The PostgreSQL store to open (undefined: the file): `postgresUrl`, without named prepared statements when
   * `--no-prepared-statements` or `FORKPOINT_PREPARED_STATEMENTS=false` says so (a transaction-mode pooler).
   */
  get postgresStore(): { postgres: string; preparedStatements?: false } | undefined {
    const postgres = this.postgresUrl;
    if (postgres === undefined) return undefined;
    const flag = this.options.preparedStatements === false;
    const env = this.io.env.FORKPOINT_PREPARED_STATEMENTS;
    if (env !== undefined && env !== "" && env !== "true" && env !== "false")
      this.usage(`FORKPOINT_PREPARED_STATEMENTS must be true or false, not ${JSON.stringify(env)}`);
    return flag || env === "false" ? { postgres, preparedStatements: false } : { postgres };
  }

  /** The options that choose the PostgreSQL store again in another command (a hint's command line). */
  get postgresArgs(): string[] {
    const store = this.postgresStore;
    if (store === undefined) return [];
    return store.preparedStatements === false ? ["--no-prepared-statements"] : [];
  }

  get out(): Output {
    this.#output ??= createOutput({ json: Boolean(this.options.json), write: this.io.out, tty: this.io.stdoutIsTTY, env: this.io.env });
    return this.#output;
  }

  /** A usage error (exit 2), reported as commander reports its own. */
  usage(message: string): never {
    this.#program.error(`error: ${message}`, { exitCode: 2, code: "forkpoint.usage" });
  }
}
