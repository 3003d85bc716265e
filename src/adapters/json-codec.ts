// Framework message values as JSON and back: binary data (Uint8Array, Buffer, ArrayBuffer) as base64, URLs as their href.
import { ValidationError } from "../models/errors.js";
import { describe, setOwn, type JsonValue } from "../models/json.js";

/**
 * The tag of an encoded value. An app's own object that has this key is wrapped ({ $fp: "object", value }), so
 * decoding gives back exactly what was encoded.
 */
const TAG = "$fp";

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * `value` with its binary data and URLs made JSON. What JSON cannot hold (a BigInt, a function, a class instance, a
 * cycle) is refused here, at `field` plus its path in the caller's own value (`messages[0].parts[1].text`), which the
 * encoded value's path would not name. Depth and size are left to forkpoint's limits.
 */
export function encodeValue(value: unknown, field = "value"): JsonValue {
  return encodeAt(value, field, new Set());
}

function encodeAt(value: unknown, path: string, ancestors: Set<object>): JsonValue {
  // The kind of binary value is kept, so each comes back as it went in (a Node Buffer as a Buffer).
  if (Buffer.isBuffer(value)) return { [TAG]: "bytes", base64: value.toString("base64"), as: "Buffer" };
  if (value instanceof Uint8Array)
    return { [TAG]: "bytes", base64: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64") };
  if (value instanceof ArrayBuffer) return { [TAG]: "bytes", base64: Buffer.from(value).toString("base64"), as: "ArrayBuffer" };
  if (value instanceof URL) return { [TAG]: "url", href: value.href };
  const isArray = Array.isArray(value);
  if (typeof value === "number" && !Number.isFinite(value)) throw new ValidationError(path, `${describe(value)} is not a JSON number`);
  if (typeof value === "bigint" || typeof value === "function" || typeof value === "symbol" || value === undefined)
    throw new ValidationError(path, `${describe(value)} is not a JSON value`);
  if (typeof value !== "object" || value === null) return value as JsonValue;
  if (!isArray && !isPlainObject(value)) throw new ValidationError(path, `${describe(value)} is not a plain JSON object`);
  if (ancestors.has(value)) throw new ValidationError(path, "contains a cycle (a value that includes itself)");
  ancestors.add(value);
  try {
    if (isArray) return value.map((v, i) => encodeAt(v, `${path}[${i}]`, ancestors));
    const out: Record<string, JsonValue> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) setOwn(out, k, encodeAt(v, `${path}.${k}`, ancestors));
    return TAG in out ? { [TAG]: "object", value: out } : out;
  } finally {
    ancestors.delete(value);
  }
}

/** The inverse of `encodeValue`: base64 back to the Uint8Array, Buffer or ArrayBuffer it was, hrefs to URLs. */
export function decodeValue(value: JsonValue): any {
  if (Array.isArray(value)) return value.map(decodeValue);
  if (typeof value !== "object" || value === null) return value as JsonValue;
  const tag = value[TAG];
  if (tag === "bytes" && typeof value.base64 === "string") {
    const bytes = Buffer.from(value.base64, "base64");
    if (value.as === "Buffer") return bytes;
    const copy = new Uint8Array(bytes);
    return value.as === "ArrayBuffer" ? copy.buffer : copy;
  }
  if (tag === "url" && typeof value.href === "string") return new URL(value.href);
  const inner =
    tag === "object" && typeof value.value === "object" && value.value !== null && !Array.isArray(value.value) ? value.value : value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(inner)) setOwn(out, k, decodeValue(v));
  return out;
}
