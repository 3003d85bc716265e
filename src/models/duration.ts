// Durations as the API takes them: a number of milliseconds, or "30s", "15m", "2h", "7d".
import ms from "ms";

/** The longest duration accepted: far beyond any TTL, and now + it is always a valid Date (which ends in 275760). */
export const MAX_DURATION_MS = 1000 * 365.25 * 24 * 3600 * 1000;

const EXPECTED = 'a positive duration (ms, or like "30s", "15m", "2h", "7d")';

/** Parses a duration into milliseconds; throws on anything that is not a positive finite duration of at most 1,000 years. */
export function parseDuration(value: unknown): number {
  let millis: unknown;
  if (typeof value === "number") millis = value;
  else if (typeof value === "string") {
    try {
      millis = ms(value as ms.StringValue);
    } catch {
      // ms throws its own wording on "" and on strings over 100 characters.
      millis = undefined;
    }
  }
  if (typeof millis !== "number" || !Number.isFinite(millis) || millis <= 0) {
    throw new Error(`must be ${EXPECTED}, got ${describe(value)}`);
  }
  if (millis > MAX_DURATION_MS) throw new Error(`must be at most 1,000 years, got ${describe(value)}`);
  return millis;
}

function describe(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value);
  return value === null ? "null" : typeof value;
}
