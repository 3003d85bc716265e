// Opaque keyset cursors: a base64url token of the last row's sort key.
import { ValidationError } from "../models/errors.js";

export function encodeCursor(key: (string | number)[]): string {
  return Buffer.from(JSON.stringify(key)).toString("base64url");
}

/** Decodes a cursor made by `encodeCursor` with the given shape; anything else is a `ValidationError`. */
export function decodeCursor<T extends (string | number)[]>(cursor: string, shape: ("string" | "number")[]): T {
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    key = undefined;
  }
  const ok = Array.isArray(key) && key.length === shape.length && key.every((v, i) => typeof v === shape[i] && (typeof v !== "number" || Number.isFinite(v)));
  if (!ok) throw new ValidationError("cursor", "is not a cursor this listing returned");
  return key as T;
}
