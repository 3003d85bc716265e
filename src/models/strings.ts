// The one rule for text that crosses the API: forkpoint stores only well-formed Unicode (no lone surrogates).
import { ValidationError } from "./errors.js";

// A lone surrogate (half of a UTF-16 pair) cannot be encoded as UTF-8: a database stores it as other bytes,
// and every hash computed over the original no longer matches what is read back.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Whether `text` holds only whole characters (String.prototype.isWellFormed, for runtimes and libs without it). */
export function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** Throws a `ValidationError` (code `MALFORMED_TEXT`) naming `field` when `text` holds a lone surrogate. */
export function assertWellFormed(text: string, field: string): void {
  if (!isWellFormed(text)) {
    throw new ValidationError(field, "holds a lone surrogate (half of a UTF-16 pair), which cannot be stored as text", "MALFORMED_TEXT");
  }
}
