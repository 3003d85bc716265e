// The saver's mirrored message lists: a list extends the mirror only with the same objects and field values (nested
// plain objects and arrays too), and the size bound evicts the least recently used thread.
import { describe, expect, it } from "vitest";
import { MirrorCache, extendsMirror, mirrorOf } from "../../src/langgraph/mirror-cache.js";

const msg = (content: string) => ({ role: "user", content });

describe("extendsMirror", () => {
  it("holds for the same objects followed by new ones, and not for a copy, a reassigned field or a shorter list", () => {
    const a = msg("a"),
      b = msg("b");
    const mirror = mirrorOf([a, b]);
    expect(extendsMirror(mirror, [a, b])).toBe(true);
    expect(extendsMirror(mirror, [a, b, msg("c")])).toBe(true);
    expect(extendsMirror(mirror, [a])).toBe(false);
    expect(extendsMirror(mirror, [a, msg("b")])).toBe(false);
    b.content = "redacted";
    expect(extendsMirror(mirror, [a, b])).toBe(false);
  });

  it("notices a field added to a stored item, a change in a LangChain message's lc_kwargs, and a primitive item replaced", () => {
    const lc = { content: "x", lc_kwargs: { content: "x" } };
    const plain = msg("p");
    const mirror = mirrorOf([lc, plain, "text"]);
    expect(extendsMirror(mirror, [lc, plain, "text"])).toBe(true);
    lc.lc_kwargs.content = "y";
    expect(extendsMirror(mirror, [lc, plain, "text"])).toBe(false);
    lc.lc_kwargs.content = "x";
    (plain as Record<string, unknown>).name = "n";
    expect(extendsMirror(mirror, [lc, plain, "text"])).toBe(false);
    delete (plain as Record<string, unknown>).name;
    expect(extendsMirror(mirror, [lc, plain, "other"])).toBe(false);
    expect(extendsMirror(mirror, [lc, plain, "text"])).toBe(true);
  });
});

describe("extendsMirror, inside the items", () => {
  it("notices a change in nested plain objects and arrays: a content block's text, a tool call's args, an element added or removed", () => {
    const m = {
      role: "assistant",
      content: [{ type: "text", text: "card 1234-5678" }],
      tool_calls: [{ name: "search", args: { q: "lisbon", tags: ["a"] } }],
    };
    const mirror = mirrorOf([m]);
    const changes: [string, () => void, () => void][] = [
      ["block text", () => (m.content[0]!.text = "card [card]"), () => (m.content[0]!.text = "card 1234-5678")],
      ["tool args", () => (m.tool_calls[0]!.args.q = "porto"), () => (m.tool_calls[0]!.args.q = "lisbon")],
      ["element added", () => m.tool_calls[0]!.args.tags.push("b"), () => m.tool_calls[0]!.args.tags.pop()],
      ["block removed", () => m.content.pop(), () => m.content.push({ type: "text", text: "card 1234-5678" })],
    ];
    for (const [what, change, undo] of changes) {
      change();
      expect(extendsMirror(mirror, [m]), what).toBe(false);
      undo();
    }
    // Put back to equal values: the first block is a new object now, the rest are the same ones.
    expect(extendsMirror(mirror, [m])).toBe(false);
    expect(extendsMirror(mirrorOf([m]), [m])).toBe(true);
  });

  it("follows nesting only so deep, and compares what is not a plain object or array (a Date) by identity", () => {
    let deep: Record<string, unknown> = { leaf: "x" };
    const bottom = deep;
    for (let i = 0; i < 20; i++) deep = { down: deep };
    const when = new Date(0);
    const item = { deep, when };
    const mirror = mirrorOf([item]);
    bottom.leaf = "y";
    when.setTime(1);
    expect(extendsMirror(mirror, [item])).toBe(true);
    item.when = new Date(1);
    expect(extendsMirror(mirror, [item])).toBe(false);
  });
});

describe("MirrorCache", () => {
  it("keeps at most maxItems across threads, dropping the least recently used first, never the one just set", () => {
    const c = new MirrorCache(4);
    c.set("s1", { headHash: "h1", checkpointId: "c", ...mirrorOf([msg("a"), msg("b")]) });
    c.set("s2", { headHash: "h2", checkpointId: "c", ...mirrorOf([msg("c")]) });
    c.set("s1", { headHash: "h1b", checkpointId: "c", ...mirrorOf([msg("a"), msg("b"), msg("d")]) }); // s1 is now the most recent: 4 items
    c.set("s3", { headHash: "h3", checkpointId: "c", ...mirrorOf([msg("e")]) }); // 5 items: s2 (least recent) goes
    expect([c.get("s2"), c.get("s1")?.headHash, c.get("s3")?.headHash]).toEqual([undefined, "h1b", "h3"]);
    c.set("s4", { headHash: "h4", checkpointId: "c", ...mirrorOf([1, 2, 3, 4, 5]) }); // larger than the bound alone: kept, the others go
    expect([c.get("s1"), c.get("s3"), c.get("s4")?.headHash]).toEqual([undefined, undefined, "h4"]);
    c.delete("s4");
    c.set("s5", { headHash: "h5", checkpointId: "c", ...mirrorOf([1, 2, 3]) });
    expect(c.get("s5")?.headHash).toBe("h5");
  });

  it("keeps its own copy of the items: the caller's array pushed to later reads as new items, not as mirrored ones", () => {
    const a = msg("a"),
      b = msg("b");
    const theirs = [a];
    const mirror = mirrorOf(theirs);
    theirs.push(b);
    expect(mirror.items).toEqual([a]);
    expect(mirror.items).not.toBe(theirs);
    expect(extendsMirror(mirror, theirs)).toBe(true);
    expect(theirs.slice(mirror.items.length)).toEqual([b]);
  });

  it("counts a mirror as large as it was when set, though its array grows later; get makes a thread the most recent", () => {
    const c = new MirrorCache(4);
    const grown = [1, 2];
    c.set("g", { headHash: "g", checkpointId: "c", ...mirrorOf(grown) });
    grown.push(3, 4, 5);
    c.delete("g");
    c.set("s1", { headHash: "h1", checkpointId: "c", ...mirrorOf([1, 2, 3]) });
    c.set("s2", { headHash: "h2", checkpointId: "c", ...mirrorOf([1]) });
    expect(c.get("s1")?.headHash).toBe("h1"); // s1 is now the most recent: s2 goes first
    c.set("s3", { headHash: "h3", checkpointId: "c", ...mirrorOf([1]) });
    expect([c.get("s1")?.headHash, c.get("s2"), c.get("s3")?.headHash]).toEqual(["h1", undefined, "h3"]);
  });
});
