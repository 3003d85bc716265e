// Keys that share a name with a built-in object property ("__proto__" as JSON.parse gives it, "constructor",
// "toString", "valueOf") are keys like any other: in a state diff, a tracked field, and the adapters' stored values.
import { tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { loadChat, saveChat, undoableTools } from "../../src/ai/index.js";
import { ValidationError } from "../../src/index.js";
import { ForkpointSession } from "../../src/openai-agents/index.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const PROTO = () => JSON.parse('{"__proto__": {"a": 1}, "b": 2}') as Record<string, unknown>;

describe("a state diff", () => {
  it("reports an own __proto__ key added, changed and removed", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const a = await s.checkpoint({ name: "a" });
    await s.setState(JSON.parse('{"__proto__": 1}'));
    const b = await s.checkpoint({ name: "b" });
    await s.setState(JSON.parse('{"__proto__": 2}'));
    const c = await s.checkpoint({ name: "c" });
    await s.setState({});
    const d = await s.checkpoint({ name: "d" });
    expect((await s.diff(a.id, b.id)).state).toEqual({ added: [{ path: ["__proto__"], value: 1 }], removed: [], changed: [] });
    expect((await s.diff(b.id, c.id)).state.changed).toEqual([{ path: ["__proto__"], from: 1, to: 2 }]);
    expect((await s.diff(c.id, d.id)).state).toEqual({ added: [], removed: [{ path: ["__proto__"], value: 2 }], changed: [] });
  });

  it("reports keys named as Object.prototype's members added and removed", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const a = await s.checkpoint({ name: "a" });
    await s.setState({ constructor: 1, toString: "x", hasOwnProperty: null, plain: 1 });
    const b = await s.checkpoint({ name: "b" });
    await s.setState({});
    const c = await s.checkpoint({ name: "c" });
    const names = ["constructor", "hasOwnProperty", "plain", "toString"];
    expect((await s.diff(a.id, b.id)).state.added.map((x) => x.path[0]).sort()).toEqual(names);
    expect((await s.diff(b.id, c.id)).state.removed.map((x) => x.path[0]).sort()).toEqual(names);
    expect((await s.diff(b.id, c.id)).state.changed).toEqual([]);
  });
});

describe("a tracked object", () => {
  for (const field of ["valueOf", "constructor", "__proto__"])
    it(`resets a field named ${field} on a rollback to before its first save`, async () => {
      const { fp } = dbs.open();
      const s = await fp.createSession({ userId: "u" });
      const agent = JSON.parse(`{${JSON.stringify(field)}: "initial"}`) as Record<string, unknown>;
      const cp = await s.checkpoint({ name: "before" });
      const t = s.track(agent, { fields: [field] });
      Object.defineProperty(agent, field, { value: "changed", enumerable: true, writable: true, configurable: true });
      await t.save();
      await s.rollback(cp.id);
      expect(Object.hasOwn(agent, field)).toBe(true);
      expect(Object.getOwnPropertyDescriptor(agent, field)!.value).toBe("initial");
      expect(Object.getPrototypeOf(agent)).toBe(Object.prototype);
    });
});

it("a tracked field named __proto__ is saved with the state and brought back by a move", async () => {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  const agent = JSON.parse('{"__proto__": "initial", "other": 1}') as Record<string, unknown>;
  const t = s.track(agent, { fields: ["__proto__", "other"] });
  const set = (v: unknown) => Object.defineProperty(agent, "__proto__", { value: v, enumerable: true, writable: true, configurable: true });
  set("saved-one");
  await t.save();
  const cp = await s.checkpoint({ name: "one" });
  set("later");
  await t.save();
  await s.rollback(cp.id);
  expect(Object.getOwnPropertyDescriptor(agent, "__proto__")!.value).toBe("saved-one");
});

describe("the adapters", () => {
  it("saveChat stores a tool input with an own __proto__ key, and loadChat gives it back", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const messages = [
      { id: "m1", role: "user", parts: [{ type: "text", text: "hi" }] },
      {
        id: "m2",
        role: "assistant",
        parts: [{ type: "tool-search", toolCallId: "c1", state: "output-available", input: PROTO(), output: { ok: true } }],
      },
    ];
    await saveChat(s, messages as Parameters<typeof saveChat>[1]);
    const part = ((await loadChat(s))[1]!.parts[0] as { input: Record<string, unknown> }).input;
    expect(Object.hasOwn(part, "__proto__")).toBe(true);
    expect(JSON.stringify(part)).toBe('{"__proto__":{"a":1},"b":2}');
  });

  it("ForkpointSession.addItems stores providerData with an own __proto__ key", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const session = new ForkpointSession(s);
    await session.addItems([{ type: "message", role: "user", content: "hi", providerData: PROTO() } as never]);
    const [item] = (await session.getItems()) as unknown as { providerData: Record<string, unknown> }[];
    expect(JSON.stringify(item!.providerData)).toBe('{"__proto__":{"a":1},"b":2}');
  });
});

describe("undoableTools", () => {
  it("refuses an undo for a tool the ToolSet does not have, named as an inherited property", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const note = tool({ inputSchema: z.object({ text: z.string() }), execute: async () => "ok" });
    const undos = { toString: () => undefined } as never;
    expect(() => undoableTools(s, { note }, undos)).toThrow(ValidationError);
  });

  it("keeps a tool named __proto__ an own tool of the set it returns", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const note = tool({ inputSchema: z.object({ text: z.string() }), execute: async () => "ok" });
    const tools = JSON.parse('{"__proto__": 0, "plain": 0}') as Record<string, unknown>;
    for (const k of Object.keys(tools))
      Object.defineProperty(tools, k, { value: note, enumerable: true, writable: true, configurable: true });
    const wrapped = undoableTools(s, tools as never, {} as never, {} as never);
    expect(Object.keys(wrapped).sort()).toEqual(["__proto__", "plain"]);
    expect(Object.getPrototypeOf(wrapped)).toBe(Object.prototype);
  });
});
