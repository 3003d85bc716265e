// defineTool and the registry check tool definitions up front, so mistakes show at startup, not mid-rollback.
import { describe, expect, it } from "vitest";
import { ConflictError, ValidationError, defineTool } from "../../src/index.js";
import { openForkpoint } from "../fixtures/backend.js";

const run = async () => null;

describe("defineTool", () => {
  it("returns a frozen definition, with or without undo", () => {
    const tool = defineTool({ name: "t", run, undo: async () => {} });
    expect(Object.isFrozen(tool)).toBe(true);
    expect(defineTool({ name: "irreversible", run }).undo).toBeUndefined();
  });

  it.each([
    ["not an object", null, "definition"],
    ["an empty name", { name: " ", run }, "name"],
    ["a name that is not a string", { name: 3, run }, "name"],
    ["no run", { name: "t" }, "run"],
    ["an undo that is not a function", { name: "t", run, undo: "nope" }, "undo"],
  ])("refuses %s", (_label, definition, field) => {
    const error = (() => {
      try {
        defineTool(definition as never);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe(field);
  });
});

describe("the tool registry of openForkpoint", () => {
  it("refuses two tools with one name, and things that are not tools", () => {
    expect(() => openForkpoint({ path: ":memory:", tools: [defineTool({ name: "a", run }), defineTool({ name: "a", run })] })).toThrow(
      ConflictError,
    );
    expect(() => openForkpoint({ path: ":memory:", tools: [{ name: "a" } as never] })).toThrow(ValidationError);
  });
});
