// Rebuilding LangChain messages without load(): a revival is kept only when its rebuild serializes back to the stored
// text, every rebuild is a fresh object, and the saver hands out what LangGraph's own serializer would.
import { join } from "node:path";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { JsonPlusSerializer, uuid6, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Forkpoint } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { revivalOf, revive } from "../../src/langgraph/revived-items.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

const serde = new JsonPlusSerializer();
const utf8 = new TextDecoder();

/** What the saver stores per item: LangGraph's serializer's JSON of it. */
async function textOf(item: unknown): Promise<string> {
  const [, bytes] = await serde.dumpsTyped([item]);
  return JSON.stringify((JSON.parse(utf8.decode(bytes)) as unknown[])[0]);
}
/** The serializer's own revival of a stored text. */
async function loaded(text: string): Promise<unknown> {
  return ((await serde.loadsTyped("json", `[${text}]`)) as unknown[])[0];
}
const serialize = async (x: unknown) => JSON.parse(await textOf(x)) as never;

const messages = (): BaseMessage[] => [
  new SystemMessage("be brief"),
  new HumanMessage({
    content: [
      { type: "text", text: "look" },
      { type: "image_url", image_url: { url: "data:," } },
    ],
    id: "h1",
    name: "ann",
  }),
  new AIMessage({
    content: "calling",
    id: "a1",
    tool_calls: [{ name: "search", args: { q: "x", n: [1, 2] }, id: "c1", type: "tool_call" }],
    additional_kwargs: { nested: { deep: [true, null] } },
    response_metadata: { model: "m", tokens: 3 },
    usage_metadata: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
  }),
  new ToolMessage({ content: "found", tool_call_id: "c1", name: "search", status: "success" }),
];

describe("revivalOf / revive", () => {
  it("rebuilds each message type as the serializer revives it: same class, same serialized value, a fresh object each time", async () => {
    for (const m of messages()) {
      const text = await textOf(m);
      const item = await loaded(text);
      const r = await revivalOf(item, text, serialize);
      expect(r, m.constructor.name).not.toBeNull();
      const a = revive(r!),
        b = revive(r!);
      expect(a).toBeInstanceOf(m.constructor);
      expect(await textOf(a)).toBe(text);
      expect(a).not.toBe(b);
      expect(a).toEqual(item);
    }
  });

  it("a rebuild is independent of the one before: mutating a returned message leaves the next one as stored", async () => {
    const m = messages()[2] as AIMessage;
    const text = await textOf(m);
    const item = await loaded(text);
    const r = (await revivalOf(item, text, serialize))!;
    // Mutating the object the serializer gave back (which the caller owns) after the revival was taken.
    (item as AIMessage).tool_calls![0]!.args.q = "changed";
    const a = revive(r) as AIMessage;
    a.additional_kwargs.nested = "changed";
    const b = revive(r) as AIMessage;
    expect(b.tool_calls![0]!.args.q).toBe("x");
    expect(b.additional_kwargs.nested).toEqual({ deep: [true, null] });
    expect(await textOf(b)).toBe(text);
  });

  it("no revival for what is not a LangChain serializable, or whose rebuild would not serialize to the stored text", async () => {
    expect(await revivalOf({ role: "user", content: "hi" }, '{"role":"user","content":"hi"}', serialize)).toBeNull();
    expect(await revivalOf("text", '"text"', serialize)).toBeNull();
    // A class whose constructor changes its own arguments: building it again does not give what was stored.
    class Shouting extends HumanMessage {
      constructor(fields: { content: string }) {
        super({ content: `${fields.content}!` });
      }
    }
    const s = new Shouting({ content: "hello" });
    expect(await revivalOf(s, await textOf(s), serialize)).toBeNull();
    // A message holding another LangChain object: the serializer revives the inner one as a class instance, which a
    // copy of the arguments could not give back.
    const outer = new AIMessage({ content: "x", additional_kwargs: { inner: new HumanMessage("y") as never } });
    const outerText = await textOf(outer);
    const outerLoaded = await loaded(outerText);
    expect((outerLoaded as AIMessage).additional_kwargs.inner).toBeInstanceOf(HumanMessage);
    expect(await revivalOf(outerLoaded, outerText, serialize)).toBeNull();
    // The same class built from a copy of what it was built with: kept (control).
    expect(await revivalOf(new HumanMessage("hello"), await textOf(new HumanMessage("hello")), serialize)).not.toBeNull();
  });
});

describe("ForkpointSaver reads LangChain messages through their revivals", () => {
  let dir: string;
  let fp: Forkpoint;
  beforeEach(() => {
    dir = makeTempDir("fp-revive-");
    fp = openForkpoint({ path: join(dir, "db.sqlite") });
  });
  afterEach(async () => {
    await fp.close();
    removeDir(dir);
  });

  const checkpoint = (step: number, list: BaseMessage[]): Checkpoint => ({
    v: 4,
    id: uuid6(step),
    ts: new Date().toISOString(),
    channel_values: { messages: list },
    channel_versions: { messages: step + 1 },
    versions_seen: {},
  });

  it("every getTuple gives fresh objects equal to what the serializer revives, whether read before or not", async () => {
    const saver = new ForkpointSaver(fp);
    const thread = { configurable: { thread_id: "t", checkpoint_ns: "" } };
    const list = messages();
    const config = await saver.put(thread, checkpoint(0, list), { source: "input", step: 0, parents: {} }, { messages: 1 });
    const expected = await Promise.all(list.map(async (m) => loaded(await textOf(m))));
    const reads: BaseMessage[][] = [];
    for (const s of [saver, saver, new ForkpointSaver(fp), saver]) {
      const t = await s.getTuple(config);
      reads.push(t!.checkpoint.channel_values.messages as BaseMessage[]);
    }
    for (const read of reads) {
      expect(read).toEqual(expected);
      read.forEach((m, i) => expect(m).toBeInstanceOf(list[i]!.constructor));
    }
    // Fresh objects: no two reads share a message, and a caller's change to one never reaches the next read.
    expect(reads[1]![2]).not.toBe(reads[0]![2]);
    (reads[1]![2] as AIMessage).tool_calls![0]!.args.q = "mutated";
    (reads[1]![1] as HumanMessage).content = "mutated";
    const again = (await saver.getTuple(config))!.checkpoint.channel_values.messages as BaseMessage[];
    expect(again).toEqual(expected);
  });

  it("a message added in place by a node after a read is stored as new, and read back as stored", async () => {
    const saver = new ForkpointSaver(fp);
    const thread = { configurable: { thread_id: "t2", checkpoint_ns: "" } };
    let config = await saver.put(thread, checkpoint(0, messages()), { source: "input", step: 0, parents: {} }, { messages: 1 });
    const read = (await saver.getTuple(config))!.checkpoint.channel_values.messages as BaseMessage[];
    const next = [...read, new AIMessage({ content: "more", id: "a2" })];
    config = await saver.put(config, checkpoint(1, next), { source: "loop", step: 1, parents: {} }, { messages: 2 });
    const back = (await saver.getTuple(config))!.checkpoint.channel_values.messages as BaseMessage[];
    expect(await Promise.all(back.map(textOf))).toEqual(await Promise.all(next.map(textOf)));
  });
});
