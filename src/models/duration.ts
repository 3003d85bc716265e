// Durations as the API takes them: a number of milliseconds, or "30s", "15m", "2h", "7d".
import ms from "ms";

/** Parses a duration into milliseconds; throws on anything that is not a positive finite duration. */
export function parseDuration(value: number | string): number {
  const millis = typeof value === "number" ? value : ms(value as ms.StringValue);
  if (typeof millis !== "number" || !Number.isFinite(millis) || millis <= 0) {
    throw new Error(`must be a positive duration (ms, or like "30s", "15m", "2h", "7d"), got ${JSON.stringify(value)}`);
  }
  return millis;
}
