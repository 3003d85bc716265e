// Lone surrogates (half of a UTF-16 pair) through ForkpointSaver: refused with the engine's rule (ValidationError, code
// MALFORMED_TEXT) before anything is written, so the hash chain stays whole and the thread resumes after a reopen.
import { HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { randomBytes } from "node:crypto";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { CheckpointListOptions } from "@langchain/langgraph-checkpoint";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { echoGraph, say, texts } from "./helpers.js";
import { dumpOf } from "../fixtures/backend.js";

const dbs = tempDatabases();

const thread = { configurable: { thread_id: "t" } };

describe("ForkpointSaver and lone surrogates", () => {
  it("a message id with a lone surrogate: the put is refused (MALFORMED_TEXT), and the thread resumes after a reopen", async () => {
    const path = dbs.path();
    const first = dbs.open({ path }).fp;
    const saver = new ForkpointSaver(first);
    await echoGraph(saver).invoke({ messages: [new HumanMessage("one")] }, thread);
    const tuple = (await saver.getTuple(thread))!;
    const before = await dumpOf(path);
    const bad = new HumanMessage({ content: "two", id: "\ud800" });
    const messages = [...(tuple.checkpoint.channel_values.messages as BaseMessage[]), bad];
    const refused = await saver
      .put(
        tuple.config,
        { ...tuple.checkpoint, id: "1f000000-0000-6000-8000-000000000001", channel_values: { messages } },
        { source: "loop", step: 9, parents: {} },
        { messages: 99 },
      )
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ValidationError);
    expect(refused).toMatchObject({ code: "MALFORMED_TEXT" });
    expect(await dumpOf(path)).toEqual(before);
    // Through a graph as well: its put is refused, and nothing of it is stored.
    await expect(echoGraph(saver).invoke({ messages: [bad] }, thread)).rejects.toMatchObject({ code: "MALFORMED_TEXT" });
    await first.close();

    const { fp } = dbs.open({ path });
    expect(await fp.verify()).toMatchObject({ ok: true });
    const graph = echoGraph(new ForkpointSaver(fp));
    const out = await graph.invoke({ messages: [new HumanMessage("three")] }, thread);
    expect(texts(out.messages)).toEqual(["human:one", "ai:echo: one", "human:three", "ai:echo: three"]);
  });

  it("refuses lone surrogates in the ids the saver stores as text: thread, namespace, checkpoint, task, channel", async () => {
    const { fp, path } = dbs.open();
    const before = await dumpOf(path);
    const refusals = saverRefusals(new ForkpointSaver(fp), "\ud800", "\udc00");
    for (const r of refusals) await expect(r).rejects.toMatchObject({ code: "MALFORMED_TEXT" });
    expect(await dumpOf(path)).toEqual(before);
  });

  it("refuses a NUL in those ids alike on every store (PostgreSQL's text cannot hold one)", async () => {
    const { fp, path } = dbs.open();
    const before = await dumpOf(path);
    const refusals = saverRefusals(new ForkpointSaver(fp), "\0", "\0");
    for (const r of refusals) await expect(r).rejects.toMatchObject({ code: "MALFORMED_TEXT", message: expect.stringContaining("NUL") });
    expect(await dumpOf(path)).toEqual(before);
  });

  it("refuses those ids in reads alike on every store too: getTuple, list and deleteThread", async () => {
    const { fp, path } = dbs.open();
    const saver = new ForkpointSaver(fp);
    await echoGraph(saver).invoke(say("one"), thread);
    const before = await dumpOf(path);
    const all = async (config: RunnableConfig, options?: CheckpointListOptions) => {
      const out = [];
      for await (const tuple of saver.list(config, options)) out.push(tuple);
      return out;
    };
    for (const x of ["\0", "\ud800"]) {
      const refused: [() => Promise<unknown>, string][] = [
        [() => saver.getTuple({ configurable: { thread_id: `t${x}` } }), "config.configurable.thread_id"],
        [() => saver.getTuple({ configurable: { thread_id: "t", checkpoint_ns: x } }), "config.configurable.checkpoint_ns"],
        [() => saver.getTuple({ configurable: { thread_id: "t", checkpoint_id: `1${x}` } }), "config.configurable.checkpoint_id"],
        [() => all({ configurable: { thread_id: `t${x}` } }), "config.configurable.thread_id"],
        [
          () => all({ configurable: { thread_id: "t" } }, { before: { configurable: { checkpoint_id: `1${x}` } } }),
          "before.configurable.checkpoint_id",
        ],
        [() => saver.deleteThread(`t${x}`), "threadId"],
      ];
      for (const [call, field] of refused) await expect(call()).rejects.toMatchObject({ code: "MALFORMED_TEXT", field });
    }
    expect(await dumpOf(path)).toEqual(before);
  });

  it("refuses ids past 512 characters alike on every store (PostgreSQL's indexes cannot hold a long one)", async () => {
    const { fp, path } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const long = randomBytes(3000).toString("base64").slice(0, 4000);
    const cp = (id: string, versions: Record<string, string | number> = { c: 1 }) => ({
      v: 4,
      id,
      ts: new Date().toISOString(),
      channel_values: Object.fromEntries(Object.keys(versions).map((k) => [k, 1])),
      channel_versions: versions,
      versions_seen: {},
    });
    const meta = { source: "input" as const, step: -1, parents: {} };
    await saver.put({ configurable: { thread_id: "ok" } }, cp("1"), meta, { c: 1 });
    const before = await dumpOf(path);
    const refused: [() => Promise<unknown>, string][] = [
      [() => saver.put({ configurable: { thread_id: long } }, cp("1"), meta, { c: 1 }), "config.configurable.thread_id"],
      [
        () => saver.put({ configurable: { thread_id: "a", checkpoint_ns: long } }, cp("1"), meta, { c: 1 }),
        "config.configurable.checkpoint_ns",
      ],
      [() => saver.put({ configurable: { thread_id: "a" } }, cp(long), meta, { c: 1 }), "checkpoint.id"],
      [() => saver.put({ configurable: { thread_id: "a" } }, cp("1", { [long]: 1 }), meta, { [long]: 1 }), "newVersions"],
      [() => saver.put({ configurable: { thread_id: "a" } }, cp("1", { c: long }), meta, { c: long }), "newVersions.c"],
      [() => saver.putWrites({ configurable: { thread_id: "ok", checkpoint_id: "1" } }, [["c", 1]], long), "taskId"],
      [() => saver.putWrites({ configurable: { thread_id: "ok", checkpoint_id: "1" } }, [[long, 1]], "task"), "writes[0][0]"],
    ];
    for (const [call, field] of refused) await expect(call()).rejects.toMatchObject({ code: "VALIDATION_ERROR", field });
    expect(await dumpOf(path)).toEqual(before);
  });

  it("refuses those long ids in reads and deletes too, as sessionFor and prune do, changing nothing", async () => {
    const { fp, path } = dbs.open();
    const saver = new ForkpointSaver(fp);
    await echoGraph(saver).invoke(say("one"), thread);
    const before = await dumpOf(path);
    const long = "x".repeat(600);
    const all = async (config: RunnableConfig, options?: CheckpointListOptions) => {
      const out = [];
      for await (const tuple of saver.list(config, options)) out.push(tuple);
      return out;
    };
    const refused: [() => Promise<unknown>, string][] = [
      [() => saver.getTuple({ configurable: { thread_id: long } }), "config.configurable.thread_id"],
      [() => saver.getTuple({ configurable: { thread_id: "t", checkpoint_ns: long } }), "config.configurable.checkpoint_ns"],
      [() => saver.getTuple({ configurable: { thread_id: "t", checkpoint_id: long } }), "config.configurable.checkpoint_id"],
      [() => all({ configurable: { thread_id: long } }), "config.configurable.thread_id"],
      [() => all({ configurable: { thread_id: "t", checkpoint_ns: long } }), "config.configurable.checkpoint_ns"],
      [
        () => all({ configurable: { thread_id: "t" } }, { before: { configurable: { checkpoint_id: long } } }),
        "before.configurable.checkpoint_id",
      ],
      [() => saver.deleteThread(long), "threadId"],
      [() => saver.sessionFor(long, { userId: "langgraph" }), "threadId"],
      [() => saver.prune([long]), "threadIds[0]"],
    ];
    for (const [call, field] of refused) {
      const refusal = call();
      await expect(refusal).rejects.toBeInstanceOf(ValidationError);
      await expect(refusal).rejects.toMatchObject({ code: "VALIDATION_ERROR", field, message: expect.stringContaining("at most 512") });
    }
    expect(await dumpOf(path)).toEqual(before);
  });

  it("a NUL inside a checkpoint's metadata (JSON) is stored, read back and filtered on alike on every store", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const config = { configurable: { thread_id: "meta", checkpoint_ns: "" } };
    const checkpoint = { v: 4, id: "1f000000-0000-6000-8000-000000000001", ts: new Date().toISOString(), channel_values: { c: 1 } };
    const metadata = { source: "input" as const, step: -1, parents: {}, note: "a\0b", "k\0": "\\u0000" };
    await saver.put(config, { ...checkpoint, channel_versions: { c: 1 }, versions_seen: {} }, metadata, { c: 1 });
    expect((await saver.getTuple(config))?.metadata).toEqual(metadata);
    const listed = async (filter: Record<string, unknown>) => {
      const ids = [];
      for await (const tuple of saver.list(config, { filter })) ids.push(tuple.checkpoint.id);
      return ids;
    };
    expect(await listed({ source: "input" })).toEqual([checkpoint.id]);
    expect(await listed({ note: "a\0b" })).toEqual([checkpoint.id]);
    expect(await listed({ "k\0": "\\u0000" })).toEqual([checkpoint.id]);
    expect(await listed({ note: "ab" })).toEqual([]);
    expect(await listed({ note: "a\\u0000b" })).toEqual([]);
    expect(await listed({ "k\0": "\0" })).toEqual([]);
  });
});

/** A put or putWrites with `x` in each id the saver stores as text (`ns` in the namespace), each a promise. */
function saverRefusals(saver: ForkpointSaver, x: string, ns: string): Promise<unknown>[] {
  const cp = (id: string) => ({ v: 4, id, ts: new Date().toISOString(), channel_values: {}, channel_versions: {}, versions_seen: {} });
  const meta = { source: "input" as const, step: -1, parents: {} };
  return [
    saver.put({ configurable: { thread_id: `a${x}` } }, cp("1"), meta, {}),
    saver.put({ configurable: { thread_id: "a", checkpoint_ns: ns } }, cp("1"), meta, {}),
    saver.put({ configurable: { thread_id: "a" } }, cp(`x${x}`), meta, {}),
    saver.put({ configurable: { thread_id: "a" } }, { ...cp("1"), channel_values: { [`c${x}`]: 1 } }, meta, { [`c${x}`]: 1 }),
    saver.putWrites({ configurable: { thread_id: "a", checkpoint_id: "1" } }, [["c", 1]], `task${x}`),
    saver.putWrites({ configurable: { thread_id: "a", checkpoint_id: "1" } }, [[`c${x}`, 1]], "task"),
  ];
}
