// docs/operations.md: an export's hashes cover its messages' JSON as written, key order included, so a document whose
// keys were reordered (as PostgreSQL's jsonb stores one) is refused as an edited one, nothing written; kept as text, it
// imports.
import { expect, it } from "vitest";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** `v` with each object's keys in jsonb's order: shorter first, then by bytes. */
const jsonbOrder = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(jsonbOrder);
  if (v === null || typeof v !== "object") return v;
  const keys = Object.keys(v).sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
  const out: Record<string, unknown> = {};
  for (const k of keys)
    Object.defineProperty(out, k, {
      value: jsonbOrder((v as Record<string, unknown>)[k]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return out;
};

it("refuses a document whose keys were reordered, and imports it kept as text", async () => {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  await s.append({ role: "user", content: { type: "text", zlast: 1, a: 2 } });
  const doc = await fp.exportSession(s.id, { userId: "u" });
  const { fp: other } = dbs.open();
  const refused = await rejectionOf(other.importSession(jsonbOrder(doc) as typeof doc, { userId: "u" }));
  expect(refused).toMatchObject({ code: "INTEGRITY_ERROR" });
  expect(await other.listSessions({ userId: "u" })).toMatchObject({ items: [] });
  const copy = await other.importSession(JSON.parse(JSON.stringify(doc)) as typeof doc, { userId: "u" });
  expect((await copy.history())[0]!.content).toEqual({ type: "text", zlast: 1, a: 2 });
});

it("imports a document whose states' keys were reordered: states are stored canonical", async () => {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  await s.setState({ b: 1, aa: { d: 2, cc: 3 } });
  const doc = await fp.exportSession(s.id, { userId: "u" });
  const reordered = { ...doc, states: doc.states.map((st) => ({ ...st, value: jsonbOrder(st.value) })) } as typeof doc;
  expect(JSON.stringify(reordered.states)).not.toBe(JSON.stringify(doc.states));
  const { fp: other } = dbs.open();
  const copy = await other.importSession(reordered, { userId: "u" });
  expect(await copy.getState()).toEqual({ aa: { cc: 3, d: 2 }, b: 1 });
  expect((await other.verify()).ok).toBe(true);
});
