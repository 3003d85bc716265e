// The rules for text that crosses the API: forkpoint stores only well-formed Unicode (no lone surrogates), and no NUL
// in plain-text fields (inside JSON it is an escape, `\u0000`, and stored as such).
import { ValidationError } from "./errors.js";

// A lone surrogate (half of a UTF-16 pair) cannot be encoded as UTF-8: a database stores it as other bytes,
// and every hash computed over the original no longer matches what is read back. ES2024's String methods find it.
const LONE_SURROGATES = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Whether `text` holds only whole characters. */
export const isWellFormed = (text: string): boolean => text.isWellFormed();

/** `text` with each lone surrogate replaced by U+FFFD. */
export const toWellFormed = (text: string): string => text.toWellFormed();

/** The message every `MALFORMED_TEXT` error carries after its field. */
export const MALFORMED_TEXT_MESSAGE = "holds a lone surrogate (half of a UTF-16 pair), which cannot be stored as text";

/** The message of a `MALFORMED_TEXT` error for a plain-text field holding U+0000. */
export const NUL_TEXT_MESSAGE = "holds a NUL character (U+0000), which cannot be stored as text";

/** Whether `text` is empty or only white space (as `String.prototype.trim` sees it: spaces, tabs, line ends, U+FEFF). */
export const isBlank = (text: string): boolean => !/\S/.test(text);

/** Whether `text` may be stored in a plain-text field: PostgreSQL's text refuses U+0000, so no store takes it. */
export const hasNoNul = (text: string): boolean => !text.includes("\0");

/**
 * Throws a `ValidationError` (code `MALFORMED_TEXT`) naming `field` unless `text` may be stored in a plain-text
 * field (an id, a name, a title): well-formed, without NUL.
 */
export function assertPlainText(text: string, field: string): void {
  assertWellFormed(text, field);
  if (!hasNoNul(text)) throw new ValidationError(field, NUL_TEXT_MESSAGE, "MALFORMED_TEXT");
}

/** Throws a `ValidationError` (code `MALFORMED_TEXT`) naming `field` when `text` holds a lone surrogate. */
export function assertWellFormed(text: string, field: string): void {
  if (!isWellFormed(text)) throw new ValidationError(field, MALFORMED_TEXT_MESSAGE, "MALFORMED_TEXT");
}

/**
 * `text` fit to quote in an error's field path: lone surrogates written as `\uXXXX` escapes, so that the error
 * itself holds only well-formed text (a log line or a JSON response carrying it stays valid).
 */
export function escapeLoneSurrogates(text: string): string {
  return isWellFormed(text) ? text : text.replace(LONE_SURROGATES, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}
