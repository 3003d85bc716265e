// Opaque keyset cursors: a base64url token of which listing made it and its last row's sort key, checked when read.
import { ValidationError } from "../../models/errors.js";
import { idSchema } from "../../models/inputs.js";
import { DEFAULT_LIMITS } from "../../models/limits.js";

/**
 * The listings that page with cursors. Filters (a session, a name, a time window) never change a listing's order,
 * which is what a cursor's key positions in, so only the listing is tagged: a cursor still means "after this row"
 * when a caller narrows the filter between pages.
 */
export type CursorKind = "sessions" | "checkpoints" | "timeline" | "users";

/** The parts of a sort key, each checked to the range its column holds. */
type KeyPart =
  /** A rowid (seq): a positive safe integer. */
  | "rowid"
  /** A stored time: milliseconds since the epoch (µs resolution, so not an integer), within what a Date holds. */
  | "time"
  /** A name as the API takes one (a user id): well-formed text, trimmed, not empty, within the length limit. */
  | "name"
  /** One of the listed words (a timeline row's source table). */
  | readonly string[];

type KeyValue<P extends KeyPart> = P extends "rowid" | "time" ? number : string;
export type CursorKey<S extends readonly KeyPart[]> = { [I in keyof S]: KeyValue<S[I]> };

/** The sort key of each listing, in the order its query compares them. */
export const CURSOR_SHAPES = {
  sessions: ["rowid"],
  checkpoints: ["rowid"],
  timeline: ["time", ["entry", "checkpoint", "branch", "event"], "rowid"],
  users: ["name"],
} as const satisfies Record<CursorKind, readonly KeyPart[]>;

// A short tag per listing: it is what tells one listing's cursor from another's.
const TAGS: Record<CursorKind, string> = { sessions: "s", checkpoints: "c", timeline: "t", users: "u" };
/** `new Date(ms)` holds ±8.64e15 ms; stored times are never before the epoch. */
const MAX_TIME = 8.64e15;
/**
 * Far above any cursor encodeCursor writes, so nothing large is decoded: numeric keys stay under 100 characters; a
 * name is at most maxStringField code points, each at most 6 bytes of JSON (a `\u0001` escape), in base64url.
 */
const MAX_LENGTH = 256;
const MAX_NAME_LENGTH = MAX_LENGTH + Math.ceil((6 * DEFAULT_LIMITS.maxStringField) / 3) * 4;

export function encodeCursor<K extends CursorKind>(kind: K, key: CursorKey<(typeof CURSOR_SHAPES)[K]>): string {
  return Buffer.from(JSON.stringify([TAGS[kind], ...(key as readonly unknown[])])).toString("base64url");
}

/**
 * Decodes a cursor that `encodeCursor(kind, …)` made. Anything else (a cursor of another listing, a token not
 * written by forkpoint, a key out of its column's range) is a `ValidationError` on field "cursor".
 *
 * Integrity is a strict shape, not a signature: a cursor only positions a listing that is already scoped to its
 * caller, so a forged one can show nothing more than another cursor could; what must not happen is a malformed
 * key reaching the query (a float, a negative or unsafe rowid, a time no Date holds) and silently paging wrong.
 */
export function decodeCursor<K extends CursorKind>(kind: K, cursor: string): CursorKey<(typeof CURSOR_SHAPES)[K]> {
  const shape: readonly KeyPart[] = CURSOR_SHAPES[kind];
  const refuse = (why: string): never => {
    throw new ValidationError("cursor", `is not a cursor this listing returned (${why})`);
  };
  if (cursor.length === 0 || cursor.length > (shape.includes("name") ? MAX_NAME_LENGTH : MAX_LENGTH)) refuse("not a cursor token");
  // Buffer.from skips characters outside the alphabet: a token that is not canonical base64url is not even parsed.
  const bytes = Buffer.from(cursor, "base64url");
  if (bytes.toString("base64url") !== cursor) refuse("not a cursor token");
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString("utf8"));
  } catch {
    refuse("not a cursor token");
  }
  if (!Array.isArray(parsed) || typeof parsed[0] !== "string") return refuse("not a cursor token");
  if (parsed[0] !== TAGS[kind]) refuse(Object.values(TAGS).includes(parsed[0]) ? "it pages another listing" : "not a cursor token");
  const key = parsed.slice(1);
  if (key.length !== shape.length) refuse("wrong key length");
  shape.forEach((part, i) => {
    const v: unknown = key[i];
    if (part === "rowid") {
      if (!(typeof v === "number" && Number.isSafeInteger(v) && v > 0)) refuse(`key ${i} is not a row number`);
    } else if (part === "time") {
      if (!(typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= MAX_TIME)) refuse(`key ${i} is not a time`);
    } else if (part === "name") {
      // Parsed as the API parses a name; one it would change (by trimming) is not a name it ever stored either.
      if (!(typeof v === "string" && idSchema.safeParse(v).data === v)) refuse(`key ${i} is not a name`);
    } else if (!(typeof v === "string" && part.includes(v))) {
      refuse(`key ${i} is not one of ${part.join(", ")}`);
    }
  });
  const decoded = key as CursorKey<(typeof CURSOR_SHAPES)[K]>;
  // The same key spelt otherwise (spaces, an exponent, -0, an escape) is a hand-made token, not one this listing wrote.
  if (encodeCursor(kind, decoded) !== cursor) refuse("not a cursor token");
  return decoded;
}
