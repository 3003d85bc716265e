// Option parsers and the options several commands share (the owner, paging).
import { InvalidArgumentError, type Command } from "commander";
import { CliError } from "./cli.js";

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("must be a positive integer");
  return n;
}

/** A TCP port to listen on: 1 to 65535. */
export function port(value: string): number {
  // Decimal digits only: Number() would take `0x4E21`, `1e3` and spaces around.
  const n = /^\d{1,5}$/.test(value) ? Number(value) : NaN;
  if (!(n >= 1 && n <= 65535)) throw new InvalidArgumentError("must be a port number, 1 to 65535");
  return n;
}

/**
 * Starts a server listening on `port` of 127.0.0.1 (undefined: a free one): a port in use, or one this user may not
 * listen on, is the CLI's own error naming it (Node's `listen EADDRINUSE` names no option to change).
 */
export async function listening<T>(port: number | undefined, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE")
      throw new CliError(`port ${port} of 127.0.0.1 is in use: give another --port, or none for a free one`, { cause: error });
    if (code === "EACCES")
      throw new CliError(`port ${port} of 127.0.0.1 may not be listened on by this user: give another --port`, { cause: error });
    throw error;
  }
}

/** A time: an ISO 8601 date or date-time (what `date` and the JSON output print). */
export function isoTime(value: string): Date {
  const date = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(date.getTime()))
    throw new InvalidArgumentError("must be an ISO 8601 date or time, e.g. 2025-05-01T12:00:00Z");
  return date;
}

export const DEFAULT_LIMIT = 20;

/** `-u, --user <userId>`: every session-scoped command reads as the session's owner. */
export const withUser = (command: Command) => command.requiredOption("-u, --user <userId>", "the owner (reads are scoped to one user)");

/** `-n, --limit` and `--cursor` on a listing. */
export const withPaging = (command: Command) =>
  command
    .option("-n, --limit <n>", `how many (default ${DEFAULT_LIMIT})`, positiveInt, DEFAULT_LIMIT)
    .option("--cursor <cursor>", "the next page: the cursor the previous page printed");

export interface PagingOptions {
  limit: number;
  cursor?: string;
}

/** Help text: examples, printed after the options. */
export const examples = (command: Command, lines: string[]) =>
  command.addHelpText("after", `\nExamples:\n${lines.map((l) => `  $ ${l}`).join("\n")}\n`);
