// A value nested deeper than the limit is refused with a field that names where, short enough to log: its first
// steps, the depth, its last steps (not a path thousands of characters long).
import { expect, it } from "vitest";
import { PayloadTooLargeError } from "../../src/index.js";
import { assertJson } from "../../src/models/json.js";

it("names where a value nests too deep in a field of bounded length", () => {
  let deep: Record<string, unknown> = { leaf: 1 };
  for (let i = 0; i < 3_000; i++) deep = { a: deep };
  let error: unknown;
  try {
    assertJson({ content: deep }, "message", { maxDepth: 2_000 });
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(PayloadTooLargeError);
  const field = (error as PayloadTooLargeError).field ?? "";
  expect(field.length).toBeLessThan(200);
  expect(field).toMatch(/^message\.content\.a\.a.*…\(2000 levels\)….*\.a\.a$/);
  // A shallow one keeps its whole path.
  expect(() => assertJson({ a: { b: [{ c: {} }] } }, "state", { maxDepth: 3 })).toThrow(expect.objectContaining({ field: "state.a.b[0]" }));
});
