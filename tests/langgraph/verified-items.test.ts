// The saver's kept lineages: a put extends one in place, a read of an older point keeps it, and the size bound evicts
// the least recently used thread.
import { describe, expect, it } from "vitest";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { VerifiedItemsCache, isPlainText } from "../../src/langgraph/verified-items.js";
import type { EntryRow } from "../../src/store/port/index.js";

/** A plain `{ role, content }` item the saver stored (marked as the graph's own, not a message written through forkpoint). */
const row = (branchId: string, position: number, text: string): EntryRow => ({
  seq: 0,
  id: `msg_${branchId}_${position}`,
  branchId,
  position,
  kind: "message",
  role: "user",
  content: JSON.stringify(text),
  tool: null,
  callId: null,
  clientId: null,
  metadata: JSON.stringify({ langgraph: "plain" }),
  stateId: null,
  msgCount: position,
  hash: `h${branchId}${position}`,
  createdAt: 0,
});
const segments = (branchId: string, upTo: number) => [{ branchId, after: 0, upTo }];
const texts = (c: VerifiedItemsCache, id: string) => c.get(id)?.texts.map((t) => (JSON.parse(t) as { content: string }).content);

describe("VerifiedItemsCache", () => {
  it("a put from the start keeps what it wrote, the next put from its head extends it, one from elsewhere does not", () => {
    const c = new VerifiedItemsCache();
    c.written(
      "s",
      { entryId: null, position: 0, hash: "0", stateId: null, msgCount: 0, createdAt: 0 },
      { segments: segments("b", 2), rows: [row("b", 1, "a"), row("b", 2, "b")] },
    );
    c.written(
      "s",
      { entryId: "x", position: 2, hash: "hb2", stateId: null, msgCount: 2, createdAt: 0 },
      { segments: null, rows: [row("b", 3, "c")] },
    );
    expect(texts(c, "s")).toEqual(["a", "b", "c"]);
    expect(c.get("s")!.lineage.segments).toEqual(segments("b", 3));
    // Not at the kept head (another process wrote in between): left for the next read to catch up.
    c.written(
      "s",
      { entryId: "y", position: 5, hash: "hb5", stateId: null, msgCount: 5, createdAt: 0 },
      { segments: null, rows: [row("b", 6, "f")] },
    );
    expect(texts(c, "s")).toEqual(["a", "b", "c"]);
  });

  it("a read of an older point of the kept lineage returns that prefix and keeps the whole", () => {
    const c = new VerifiedItemsCache();
    c.written(
      "s",
      { entryId: null, position: 0, hash: "0", stateId: null, msgCount: 0, createdAt: 0 },
      { segments: segments("b", 3), rows: [row("b", 1, "a"), row("b", 2, "b"), row("b", 3, "c")] },
    );
    const older = c.read("s", c.get("s"), { shared: 2, segments: segments("b", 2), fresh: [] });
    expect(older.texts.length).toBe(2);
    expect(texts(c, "s")).toEqual(["a", "b", "c"]);
  });

  it("keeps at most maxMessages across threads, dropping the least recently used first", () => {
    const c = new VerifiedItemsCache(3);
    const start = { entryId: null, position: 0, hash: "0", stateId: null, msgCount: 0, createdAt: 0 };
    c.written("s1", start, { segments: segments("b1", 2), rows: [row("b1", 1, "a"), row("b1", 2, "b")] });
    c.written("s2", start, { segments: segments("b2", 1), rows: [row("b2", 1, "x")] });
    expect([texts(c, "s1"), texts(c, "s2")]).toEqual([["a", "b"], ["x"]]);
    c.read("s1", c.get("s1"), { shared: 2, segments: segments("b1", 2), fresh: [] }); // s1 is now the most recent
    c.written("s3", start, { segments: segments("b3", 1), rows: [row("b3", 1, "y")] });
    expect([texts(c, "s1"), texts(c, "s2"), texts(c, "s3")]).toEqual([["a", "b"], undefined, ["y"]]);
  });
});

describe("isPlainText", () => {
  const serde = new JsonPlusSerializer();
  const values: unknown[] = [
    { role: "user", content: "hi" },
    { role: "assistant", content: [{ type: "text", text: 'says "lc": 1 in a string' }] },
    { role: "user", content: { nested: [1, 2.5, -0, null, true, "é\u2028"], empty: {} } },
    { lc: 2, type: "undefined" },
    { role: "user", content: "x", extra: { lc: 2, type: "constructor", id: ["Set"], method: null, args: [[1, 2]], kwargs: {} } },
    JSON.parse('{"__proto__": {"polluted": 1}, "role": "user"}'),
    { lc: 1, type: "constructor", id: ["langchain_core", "messages", "HumanMessage"], kwargs: { content: "hi" } },
  ];

  it("is true only for texts LangGraph's serializer reads back exactly as JSON.parse does", async () => {
    const verdicts: boolean[] = [];
    for (const v of values) {
      const text = JSON.stringify(v);
      verdicts.push(isPlainText(text));
      if (isPlainText(text)) expect(await serde.loadsTyped("json", text)).toStrictEqual(JSON.parse(text));
    }
    // The lc records and the __proto__ key go to the serializer; a string that mentions "lc": does not (its quotes are escaped).
    expect(verdicts).toEqual([true, true, true, false, false, false, false]);
  });
});
