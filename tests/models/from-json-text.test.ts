// fromJsonText reads every stored JSON text as JSON.parse does, its fast path for plain strings included.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fromJsonText } from "../../src/models/json.js";

describe("fromJsonText", () => {
  it("reads strings with escapes, quotes, control characters and non-ASCII text as JSON.parse does", () => {
    for (const value of ["", "plain", 'say "hi"', "back\\slash", "tab\there", "line\nbreak", "\u0001", "héllo 🌍", "\u2028", "\\"])
      expect(fromJsonText(JSON.stringify(value))).toBe(value);
  });

  it("reads any JSON value's text as JSON.parse does", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        expect(fromJsonText(text)).toEqual(JSON.parse(text));
      }),
      { numRuns: 2000 },
    );
  });

  it("reads any string's text as JSON.parse does", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), (value) => {
        expect(fromJsonText(JSON.stringify(value))).toBe(value);
      }),
      { numRuns: 2000 },
    );
  });
});
