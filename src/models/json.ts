// Checks that a value is plain JSON (no functions, symbols, BigInt, NaN, cycles, class instances) and serializes it.
import { ForkpointError, PayloadTooLargeError, ValidationError } from "./errors.js";
import type { Limits } from "./limits.js";
import { MALFORMED_TEXT_MESSAGE, assertWellFormed, escapeLoneSurrogates, isWellFormed, toWellFormed } from "./strings.js";

/** Any JSON value: what messages, state, metadata, tool args and results may hold. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/**
 * What the API takes where a JSON value goes in (message content, state, tool args): any value at compile time
 * that could be JSON, so a framework's own interfaces (an AI SDK `UIMessage`'s parts, a LangChain message), which
 * have no index signature, and readonly arrays pass without a cast. Each call checks the value in depth at run time.
 */
export type JsonInput = null | boolean | number | string | readonly unknown[] | object;
/** What the API takes where a JSON object goes in (metadata): checked to be a plain JSON object at run time. */
export type JsonObjectInput = object;

/**
 * `read()`, which reads a caller's value: a getter or a proxy trap of it that throws is a `ValidationError` naming
 * `field` (the caller's error as its `cause`), never that error untyped; forkpoint's own errors pass as they are.
 */
export function readingInput<T>(read: () => T, field: string | (() => string)): T {
  try {
    return read();
  } catch (cause) {
    if (cause instanceof ForkpointError) throw cause;
    const reason = cause instanceof Error ? cause.message : String(cause);
    const error = new ValidationError(typeof field === "string" ? field : field(), `could not be read (${reason})`);
    // As `new Error(message, { cause })` sets it (ValidationError's constructor takes no options).
    Object.defineProperty(error, "cause", { value: cause, writable: true, configurable: true });
    throw error;
  }
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** How a value that JSON cannot hold is named in a `ValidationError` ("a BigInt", "an instance of Date"). */
export function describe(value: unknown): string {
  if (value === undefined) return "undefined";
  if (typeof value === "number") return String(value);
  if (typeof value === "bigint") return "a BigInt";
  if (typeof value === "function") return "a function";
  if (typeof value === "symbol") return "a symbol";
  if (typeof value === "object" && value !== null) return `an instance of ${value.constructor?.name ?? "a class"}`;
  return typeof value;
}

/** Where a value nests too deep, named short: its first steps and its last, with how many levels lie between. */
function deepPath(path: string, depth: number): string {
  if (path.length <= 200) return path;
  return `${path.slice(0, 80)}…(${depth} levels)…${path.slice(-40)}`;
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
        assertWellFormed(node, path);
        return;
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
      throw new PayloadTooLargeError(deepPath(path, depth), `nested deeper than the limit of ${limits.maxDepth}`, limits.maxDepth);
    }
    if (ancestors.has(node)) throw new ValidationError(path, "contains a cycle (a value that includes itself)");
    ancestors.add(node);
    reading = path;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const at = (reading = `${path}[${i}]`);
        const item: unknown = node[i];
        if (item === undefined) throw new ValidationError(at, "undefined (or a hole) inside an array is not JSON");
        visit(item, at, depth + 1);
      }
    } else {
      if (!isPlainObject(node)) throw new ValidationError(path, `${describe(node)} is not a plain JSON object`);
      for (const key of Object.keys(node)) {
        if (!isWellFormed(key))
          throw new ValidationError(`${path}.${escapeLoneSurrogates(key)}`, `its key ${MALFORMED_TEXT_MESSAGE}`, "MALFORMED_TEXT");
        const at = (reading = `${path}.${key}`);
        const item = (node as Record<string, unknown>)[key];
        if (item !== undefined) visit(item, at, depth + 1);
      }
      reading = path;
      if (Object.getOwnPropertySymbols(node).length > 0) throw new ValidationError(path, "has symbol keys, which JSON cannot hold");
    }
    ancestors.delete(node);
  };
  if (value === undefined) throw new ValidationError(field, "is required (undefined is not a JSON value)");
  // Where the walk reads the caller's value (a getter or a proxy trap may throw there): named by the error.
  let reading = field;
  readingInput(
    () => visit(value, field, 0),
    () => reading,
  );
}

/**
 * The path (keys and indexes) of the first string or object key in `value` that holds a lone surrogate; undefined
 * when there is none. Only text is looked at: the other checks of `assertJson` are not made here.
 */
export function loneSurrogatePath(value: unknown): (string | number)[] | undefined {
  // Iterative, so that no nesting depth overflows the stack; each step knows its parent to rebuild the path found.
  type Step = { node: unknown; key: string | number; parent: Step | undefined };
  const pathTo = (step: Step | undefined, last?: string): (string | number)[] => {
    const path: (string | number)[] = last === undefined ? [] : [last];
    for (let s = step; s?.parent; s = s.parent) path.unshift(s.key);
    return path;
  };
  const seen = new Set<object>();
  const stack: Step[] = [{ node: value, key: "", parent: undefined }];
  for (let step = stack.pop(); step; step = stack.pop()) {
    const node = step.node;
    if (typeof node === "string") {
      if (!isWellFormed(node)) return pathTo(step);
      continue;
    }
    if (typeof node !== "object" || node === null || seen.has(node)) continue;
    seen.add(node);
    // Pushed in reverse, so the first offending part in document order is found first.
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push({ node: node[i], key: i, parent: step });
      continue;
    }
    const keys = Object.keys(node);
    for (const key of keys) if (!isWellFormed(key)) return pathTo(step, escapeLoneSurrogates(key));
    for (let i = keys.length - 1; i >= 0; i--)
      stack.push({ node: (node as Record<string, unknown>)[keys[i]!], key: keys[i]!, parent: step });
  }
  return undefined;
}

/** Validates `value` as JSON within the limits and returns its JSON text. */
export function toJsonText(value: unknown, field: string, limits: Pick<Limits, "maxDepth" | "maxPayloadBytes">): string {
  // A string (most message contents) is JSON as it is: no walk, and none of its allocations; only its text is checked.
  if (typeof value === "string") assertWellFormed(value, field);
  else assertJson(value, field, limits);
  // A getter read again may throw (or answer otherwise) this time: still the caller's value that cannot be read.
  const text = readingInput(() => JSON.stringify(value), field);
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
 * JSON text of what a tool returned, to be stored as its result. A value that is not plain JSON is stored as
 * JSON.stringify writes it (a Date becomes its ISO string; `undefined`, as a tool that returns nothing gives, is null).
 * What cannot be stored as it is never replaced by something else: a result over the payload limit or nested deeper
 * than the depth limit (as stored) is a `PayloadTooLargeError`, one JSON.stringify cannot write (a cycle, a BigInt) a
 * `ValidationError`, one holding a lone surrogate (in a string or a key) a `ValidationError` `MALFORMED_TEXT`, all
 * naming `result`.
 */
export function resultAsJson(value: unknown, limits: Pick<Limits, "maxDepth" | "maxPayloadBytes">): string {
  if (value === undefined) return "null";
  try {
    return toJsonText(value, "result", limits);
  } catch (error) {
    if (error instanceof PayloadTooLargeError || (error instanceof ValidationError && error.code === "MALFORMED_TEXT")) throw error;
  }
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (cause) {
    throw new ValidationError("result", `cannot be written as JSON (${cause instanceof Error ? cause.message : String(cause)})`);
  }
  // What JSON.stringify writes nothing for (a function) is no result, as `undefined` is.
  if (text === undefined) return "null";
  if (wellFormedJsonText(text) !== text) throw new ValidationError("result", MALFORMED_TEXT_MESSAGE, "MALFORMED_TEXT");
  // Its depth and size as stored, which an export and an import check again.
  return toJsonText(JSON.parse(text), "result", limits);
}

// JSON.stringify writes a lone surrogate as a `\udXXX` escape (and a pair as the character itself), so JSON text
// without such an escape holds none; one that has one may still be a literal backslash, which the repair leaves be.
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** JSON text (as JSON.stringify writes it) whose strings and keys hold lone surrogates, with them replaced by U+FFFD. */
export function wellFormedJsonText<T extends string | undefined>(text: T): T {
  if (text === undefined || !SURROGATE_ESCAPE.test(text)) return text;
  return JSON.stringify(JSON.parse(text, repairText)) as T;
}

/** A JSON.parse reviver replacing lone surrogates in strings and object keys (keys that then collide: the last wins). */
function repairText(_key: string, value: unknown): unknown {
  if (typeof value === "string") return toWellFormed(value);
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (keys.every(isWellFormed)) return value;
  return Object.fromEntries(keys.map((k) => [toWellFormed(k), (value as Record<string, unknown>)[k]]));
}

/**
 * The value of a stored JSON text. A string with no escape in it (most chat messages) is its text between the quotes:
 * a slice costs a sixth of `JSON.parse`, and a long history reads one per message.
 */
export function fromJsonText(text: string): JsonValue {
  return text.charCodeAt(0) === 34 && text.indexOf("\\") === -1 ? text.slice(1, -1) : (JSON.parse(text) as JsonValue);
}

/** Sets `key` as an own property of `obj`, "__proto__" too (an assignment would set the object's prototype instead). */
export function setOwn<T>(obj: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}
