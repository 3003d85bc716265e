// Tracked fields named like Object.prototype members (`toString`, `constructor`, `__proto__`) that the object does not
// have are fields it does not have: nothing is saved for them, and a move leaves the object's own keys and prototype as
// they were. A field the object has as its own is saved and loaded as any other; a setter its class defines still runs.
import { expect, it } from "vitest";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const INHERITED = ["toString", "constructor", "__proto__", "valueOf"];

it("fields the object lacks, named like inherited members, are not saved and not made by a move", async () => {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  const agent: Record<string, unknown> = { memory: ["a"] };
  const t = s.track(agent, { fields: ["memory", "notYet", ...INHERITED] });
  expect(await t.save()).toEqual({ memory: ["a"] });
  const cp = await s.checkpoint({ name: "c" });
  agent.memory = ["a", "b"];
  agent.notYet = 1;
  await t.save();
  await s.append({ role: "user", content: "x" });
  await s.rollback(cp.id);
  expect(Object.keys(agent)).toEqual(["memory"]);
  expect(agent.memory).toEqual(["a"]);
  expect(Object.getPrototypeOf(agent)).toBe(Object.prototype);
  expect(String(agent)).toBe("[object Object]");
});

it("own fields named like inherited members are saved and loaded back; a class's setter runs", async () => {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  class Agent {
    seen: unknown[] = [];
    #label = "x";
    get label() {
      return this.#label;
    }
    set label(v: string) {
      this.seen.push(v);
      this.#label = v;
    }
  }
  const agent = new Agent() as Agent & Record<string, unknown>;
  const own = JSON.parse('{"__proto__": 1, "toString": "t1"}') as Record<string, unknown>;
  for (const [k, v] of Object.entries(own))
    Object.defineProperty(agent, k, { value: v, enumerable: true, writable: true, configurable: true });
  const t = s.track(agent, { fields: ["label", "toString", "__proto__"] });
  expect(await t.save()).toEqual(JSON.parse('{"label": "x", "toString": "t1", "__proto__": 1}'));
  const cp = await s.checkpoint({ name: "c" });
  agent.label = "y";
  Object.defineProperty(agent, "__proto__", { value: 2, enumerable: true, writable: true, configurable: true });
  agent.toString = "t2" as never;
  await t.save();
  await s.append({ role: "user", content: "x" });
  agent.seen = [];
  await s.rollback(cp.id);
  expect([agent.label, agent.toString, Object.getOwnPropertyDescriptor(agent, "__proto__")?.value]).toEqual(["x", "t1", 1]);
  expect(new Set(agent.seen)).toEqual(new Set(["x"]));
  expect(Object.getPrototypeOf(agent)).toBe(Agent.prototype);
});

it("a derived field (a getter without a setter) is saved as it reads and never set; the fields after it load", async () => {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  class Cart {
    x = 1;
    get total() {
      return this.x * 10;
    }
  }
  const cart = new Cart();
  const t = s.track(cart, { fields: ["total", "x"] });
  expect(await t.save()).toEqual({ total: 10, x: 1 });
  const cp = await s.checkpoint({ name: "c" });
  cart.x = 2;
  await t.save();
  await s.append({ role: "user", content: "x" });
  await s.rollback(cp.id);
  expect([cart.x, cart.total]).toEqual([1, 10]);
});

it("a field deleted before a save is gone again at that save's checkpoint; before the first save, fields start over", async () => {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  const agent: Record<string, unknown> = { a: 1, b: 1 };
  const t = s.track(agent, { fields: ["a", "b"] });
  const start = await s.checkpoint({ name: "start" });
  await t.save();
  delete agent.a;
  agent.b = 2;
  expect(await t.save()).toEqual({ b: 2 });
  const noA = await s.checkpoint({ name: "no-a" });
  agent.a = 5;
  agent.b = 3;
  await t.save();
  await s.append({ role: "user", content: "x" });
  await s.rollback(noA.id);
  expect(agent).toEqual({ b: 2 });
  expect(Object.keys(agent)).toEqual(["b"]);
  await s.rollback(start.id);
  expect(agent).toEqual({ a: 1, b: 1 });
});
