// Checks that a value is plain JSON (no functions, symbols, BigInt, NaN, cycles, class instances) and serializes it.
import { PayloadTooLargeError, ValidationError } from "./errors.js";
import type { Limits } from "./limits.js";

/** Any JSON value: what messages, state, metadata, tool args and results may hold. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function describe(value: unknown): string {
  if (value === undefined) return "undefined";
  if (typeof value === "number") return String(value);
  if (typeof value === "bigint") return "a BigInt";
  if (typeof value === "function") return "a function";
  if (typeof value === "symbol") return "a symbol";
  if (typeof value === "object" && value !== null) return `an instance of ${value.constructor?.name ?? "a class"}`;
  return typeof value;
}

/**
 * Throws a `ValidationError` naming the path of the first non-JSON part of `value`.
 * `undefined` is accepted only as an object property (dropped, as JSON.stringify does).
 */
export function assertJson(value: unknown, field: string, limits: Pick<Limits, "maxDepth">): asserts value is JsonValue {
  const ancestors = new Set<object>();
  const visit = (node: unknown, path: string, depth: number): void => {
    switch (typeof node) {
      case "string":
      case "boolean":
        return;
      case "number":
        if (!Number.isFinite(node)) throw new ValidationError(path, `${describe(node)} is not a JSON number`);
        return;
      case "object":
        break;
      default:
        throw new ValidationError(path, `${describe(node)} is not a JSON value`);
    }
    if (node === null) return;
    if (depth >= limits.maxDepth) {
      throw new PayloadTooLargeError(path, `nested deeper than the limit of ${limits.maxDepth}`, limits.maxDepth);
    }
    if (ancestors.has(node)) throw new ValidationError(path, "contains a cycle (a value that includes itself)");
    ancestors.add(node);
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i];
        if (item === undefined) throw new ValidationError(`${path}[${i}]`, "undefined (or a hole) inside an array is not JSON");
        visit(item, `${path}[${i}]`, depth + 1);
      }
    } else {
      if (!isPlainObject(node)) throw new ValidationError(path, `${describe(node)} is not a plain JSON object`);
      for (const key of Object.keys(node)) {
        const item = (node as Record<string, unknown>)[key];
        if (item !== undefined) visit(item, `${path}.${key}`, depth + 1);
      }
      if (Object.getOwnPropertySymbols(node).length > 0) throw new ValidationError(path, "has symbol keys, which JSON cannot hold");
    }
    ancestors.delete(node);
  };
  if (value === undefined) throw new ValidationError(field, "is required (undefined is not a JSON value)");
  visit(value, field, 0);
}

/** Validates `value` as JSON within the limits and returns its JSON text. */
export function toJsonText(value: unknown, field: string, limits: Pick<Limits, "maxDepth" | "maxPayloadBytes">): string {
  // A string (most message contents) is JSON as it is: no walk, and none of its allocations.
  if (typeof value !== "string") assertJson(value, field, limits);
  const text = JSON.stringify(value);
  // String length is a lower bound of the UTF-8 size; only measure bytes when it might matter.
  if (text.length * 3 > limits.maxPayloadBytes) {
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes > limits.maxPayloadBytes) {
      throw new PayloadTooLargeError(field, `is ${bytes} bytes, over the limit of ${limits.maxPayloadBytes}`, limits.maxPayloadBytes);
    }
  }
  return text;
}

/**
 * JSON text of what a tool returned. A tool's effect has happened once it returns, so a result that is not
 * plain JSON is not an error: it is stored as JSON.stringify would write it (a Date becomes its ISO string),
 * or as null when even that fails (a cycle, a BigInt) or it is over the payload limit.
 */
export function resultAsJson(value: unknown, limits: Pick<Limits, "maxDepth" | "maxPayloadBytes">): string {
  if (value === undefined) return "null";
  try {
    return toJsonText(value, "result", limits);
  } catch {
    try {
      const text = JSON.stringify(value);
      return text === undefined || Buffer.byteLength(text, "utf8") > limits.maxPayloadBytes ? "null" : text;
    } catch {
      return "null";
    }
  }
}
