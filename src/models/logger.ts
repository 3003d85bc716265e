// The logger option: where forkpoint reports what no call can throw (a listener's error, a failed recovery at open).
import { z } from "zod";

/**
 * Receives what a long-running server wants in its logs but no call can report by throwing: `console` fits, and so do
 * pino's and winston's loggers. `error` is for failures (falls back to `warn` when absent), `warn` for degraded work.
 */
export interface ForkpointLogger {
  warn(message: string, detail?: unknown): void;
  error?(message: string, detail?: unknown): void;
}

export const loggerSchema = z.custom<ForkpointLogger>(
  (v) =>
    typeof v === "object" &&
    v !== null &&
    typeof (v as ForkpointLogger).warn === "function" &&
    ((v as ForkpointLogger).error === undefined || typeof (v as ForkpointLogger).error === "function"),
  "must be an object with a warn(message, detail) function (and optionally error)",
);

/** The logger as the engine calls it: `error` always there, and a logger that throws never fails the caller. */
export function resilientLogger(logger: ForkpointLogger): Required<ForkpointLogger> {
  const call = (method: "warn" | "error", message: string, detail: unknown) => {
    const fn = logger[method] ?? logger.warn;
    try {
      if (detail === undefined) fn.call(logger, message);
      else fn.call(logger, message, detail);
    } catch {
      // A logger that throws has nowhere left to report to: what it was told is dropped, the engine goes on.
    }
  };
  return { warn: (message, detail) => call("warn", message, detail), error: (message, detail) => call("error", message, detail) };
}
