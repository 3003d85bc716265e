// How the CLI hears the library's warnings and errors: one line each on standard error, with the error's code and
// message but no stack (the command's own failure line follows; a stack is for a program's log, not a terminal).
import type { ForkpointLogger } from "../index.js";

const why = (detail: unknown): string => {
  if (detail === undefined) return "";
  if (!(detail instanceof Error)) return `: ${String(detail)}`;
  const code = (detail as { code?: unknown }).code;
  return `: ${typeof code === "string" ? `${code}: ` : ""}${detail.message}`.replace(/\s*\n\s*/g, " ");
};

export function cliLogger(stderr: NodeJS.WritableStream): ForkpointLogger {
  const line = (message: string, detail?: unknown) => void stderr.write(`${message}${why(detail)}\n`);
  return { warn: line, error: line };
}
