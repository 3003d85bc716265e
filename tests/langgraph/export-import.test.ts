// A LangGraph thread's session exported and imported elsewhere carries the thread: its checkpoints, channel values and
// pending writes go with it (document version 2), so the graph goes on there where it was, as the same thread.
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { Annotation, Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ConflictError, ValidationError, openForkpoint, type Forkpoint } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import type { SessionExport } from "../../src/models/session-export.js";
import { dumpStore } from "../fixtures/backend.js";
import { tempDatabases } from "../helpers.js";
import { approvalGraph, texts } from "./helpers.js";

const dbs = tempDatabases();
const thread = (id: string) => ({ configurable: { thread_id: id } });

/** A chat graph with a channel besides the messages: `turns` counts the bot's answers. */
function countingGraph(fp: Forkpoint) {
  const State = Annotation.Root({ ...MessagesAnnotation.spec, turns: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }) });
  return new StateGraph(State)
    .addNode("bot", (state) => ({ messages: [new AIMessage(`echo: ${String(state.messages.at(-1)!.content)}`)], turns: 1 }))
    .addEdge(START, "bot")
    .addEdge("bot", END)
    .compile({ checkpointer: new ForkpointSaver(fp, { userId: "alice" }) });
}

/** A real SQLite database, whatever store the project tests (the round trip goes SQLite → store under test → SQLite). */
const sqlite = (): Forkpoint => dbs.track(openForkpoint({ path: dbs.path() }));

/** Two turns of the counting graph on thread "t1" of a SQLite database, and the thread's session exported. */
async function twoTurns(): Promise<{ fp: Forkpoint; doc: SessionExport; sessionId: string }> {
  const fp = sqlite();
  const graph = countingGraph(fp);
  await graph.invoke({ messages: [new HumanMessage("hi")] }, thread("t1"));
  await graph.invoke({ messages: [new HumanMessage("book Lisbon")] }, thread("t1"));
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const sessionId = (await saver.sessionFor("t1", { userId: "alice" })).id;
  return { fp, doc: await fp.exportSession(sessionId, { userId: "alice" }), sessionId };
}

async function checkpointIds(fp: Forkpoint, threadId: string): Promise<string[]> {
  const out: string[] = [];
  for await (const t of new ForkpointSaver(fp, { userId: "alice" }).list(thread(threadId))) out.push(t.config.configurable!.checkpoint_id);
  return out;
}

describe("exporting and importing a LangGraph thread", () => {
  it("goes on where it was on the new database, as the same thread and session, and round-trips byte for byte", async () => {
    const { fp: a, doc, sessionId } = await twoTurns();
    expect(doc.version).toBe(2);
    expect(doc.langgraph).toMatchObject({ threadId: "t1", checkpointNs: "" });
    expect(doc.langgraph!.values.some((v) => v.channel === "turns")).toBe(true);

    const { fp: b } = dbs.open();
    const copy = await b.importSession(doc, { userId: "alice" });
    expect(copy.id).toBe(sessionId);
    expect(JSON.stringify(await b.exportSession(sessionId, { userId: "alice" }))).toBe(JSON.stringify(doc));
    expect(await checkpointIds(b, "t1")).toEqual(await checkpointIds(a, "t1"));

    const graphB = countingGraph(b);
    const before = await graphB.getState(thread("t1"));
    expect(texts(before.values.messages)).toEqual(["human:hi", "ai:echo: hi", "human:book Lisbon", "ai:echo: book Lisbon"]);
    expect(before.values.turns).toBe(2);
    const third = await graphB.invoke({ messages: [new HumanMessage("book Porto")] }, thread("t1"));
    expect(third.turns).toBe(3);
    expect(texts(third.messages).slice(-2)).toEqual(["human:book Porto", "ai:echo: book Porto"]);
    // The thread is the imported session: no second session was made for it.
    expect((await b.listSessions({ userId: "alice" })).items.map((s) => s.id)).toEqual([sessionId]);
    expect((await new ForkpointSaver(b, { userId: "alice" }).sessionFor("t1", { userId: "alice" })).id).toBe(sessionId);
    expect((await b.verify({ sessionId })).ok).toBe(true);

    // And back into SQLite: the same bytes, and the graph goes on there too.
    const again = await b.exportSession(sessionId, { userId: "alice" });
    const c = sqlite();
    await c.importSession(again, { userId: "alice" });
    expect(JSON.stringify(await c.exportSession(sessionId, { userId: "alice" }))).toBe(JSON.stringify(again));
    const fourth = await countingGraph(c).invoke({ messages: [new HumanMessage("thanks")] }, thread("t1"));
    expect(fourth.turns).toBe(4);
    expect(fourth.messages).toHaveLength(8);
    expect((await c.listSessions({ userId: "alice" })).items).toHaveLength(1);
  });

  it("restores an older export into the same database after deleteThread, under the same saver", async () => {
    const { fp } = dbs.open();
    const graph = countingGraph(fp);
    await graph.invoke({ messages: [new HumanMessage("one")] }, thread("t1"));
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const sessionId = (await saver.sessionFor("t1", { userId: "alice" })).id;
    const backup = await fp.exportSession(sessionId, { userId: "alice" });
    await graph.invoke({ messages: [new HumanMessage("two")] }, thread("t1"));
    await saver.deleteThread("t1");
    await fp.importSession(backup, { userId: "alice" });
    expect((await graph.getState(thread("t1"))).values.turns).toBe(1);
    const out = await graph.invoke({ messages: [new HumanMessage("after")] }, thread("t1"));
    expect(texts(out.messages)).toEqual(["human:one", "ai:echo: one", "human:after", "ai:echo: after"]);
    expect(out.turns).toBe(2);
    expect((await fp.verify({ sessionId })).ok).toBe(true);
  });

  it("carries pending writes: an interrupted thread resumes on the new database", async () => {
    const a = sqlite();
    const graphA = approvalGraph(new ForkpointSaver(a, { userId: "alice" }));
    await graphA.invoke({ messages: [new HumanMessage("pay 10")] }, thread("p"));
    const sessionId = (await new ForkpointSaver(a, { userId: "alice" }).sessionFor("p", { userId: "alice" })).id;
    const doc = await a.exportSession(sessionId, { userId: "alice" });
    expect(doc.langgraph!.writes.length).toBeGreaterThan(0);

    const { fp: b } = dbs.open();
    await b.importSession(doc, { userId: "alice" });
    const graphB = approvalGraph(new ForkpointSaver(b, { userId: "alice" }));
    const paused = await graphB.getState(thread("p"));
    expect(paused.tasks.flatMap((t) => t.interrupts.map((i) => i.value))).toEqual(["approve?"]);
    const done = await graphB.invoke(new Command({ resume: "yes" }), thread("p"));
    expect(texts(done.messages)).toEqual(["human:pay 10", "ai:approved: yes"]);
  });

  it("moves a thread interrupted inside a subgraph with each namespace's session, and it resumes there", async () => {
    const build = (fp: Forkpoint) => {
      const inner = new StateGraph(MessagesAnnotation)
        .addNode("ask", () => ({ messages: [new AIMessage(`inner: ${interrupt("approve?") as string}`)] }))
        .addEdge(START, "ask")
        .addEdge("ask", END)
        .compile();
      return new StateGraph(MessagesAnnotation)
        .addNode("sub", inner)
        .addNode("done", () => ({ messages: [new AIMessage("outer done")] }))
        .addEdge(START, "sub")
        .addEdge("sub", "done")
        .addEdge("done", END)
        .compile({ checkpointer: new ForkpointSaver(fp, { userId: "alice" }) });
    };
    const a = sqlite();
    await build(a).invoke({ messages: [new HumanMessage("first")] }, thread("n"));
    const sessions = (await a.listSessions({ userId: "alice" })).items;
    expect(sessions).toHaveLength(2); // the root namespace's, and the subgraph's
    const { fp: b } = dbs.open();
    const namespaces = [];
    for (const s of sessions) {
      const doc = await a.exportSession(s.id, { userId: "alice" });
      namespaces.push(doc.langgraph!.checkpointNs);
      await b.importSession(doc, { userId: "alice" });
    }
    expect(namespaces.some((ns) => ns.startsWith("sub:"))).toBe(true);
    const out = await build(b).invoke(new Command({ resume: "yes" }), thread("n"));
    expect(texts(out.messages)).toEqual(["human:first", "ai:inner: yes", "ai:outer done"]);
    expect((await b.listSessions({ userId: "alice" })).items).toHaveLength(2);
  });

  it("gives the thread to the importing user, and refuses a thread that user holds already, writing nothing", async () => {
    const { doc, sessionId } = await twoTurns();
    const { fp: b } = dbs.open();
    // alice has a thread "t1" of her own on b: the document's would be a second one.
    await countingGraph(b).invoke({ messages: [new HumanMessage("mine")] }, thread("t1"));
    const dump = await dumpStore(b);
    await expect(b.importSession(doc, { userId: "alice" })).rejects.toThrow(ConflictError);
    expect(await dumpStore(b)).toEqual(dump);

    // Bob has none: the thread is his.
    await b.importSession(doc, { userId: "bob" });
    const bobs = new ForkpointSaver(b, { userId: "bob" });
    expect((await bobs.sessionFor("t1", { userId: "bob" })).id).toBe(sessionId);
    expect((await bobs.getTuple(thread("t1")))?.checkpoint.channel_values.turns).toBe(2);
    // And the same document again: its ids are taken.
    await expect(b.importSession(doc, { userId: "carol" })).rejects.toThrow(ConflictError);
  });

  it("refuses a malformed LangGraph section whole with a ValidationError", async () => {
    const { doc } = await twoTurns();
    const { fp: b } = dbs.open();
    const empty = await dumpStore(b);
    const lg = doc.langgraph!;
    const cp0 = lg.checkpoints[0]!;
    const w0 = lg.writes[0]!;
    expect(w0).toBeDefined();
    const bad: [string, unknown][] = [
      ["version 1 with a section", { ...doc, version: 1 }],
      ["version 2 without one", { ...doc, langgraph: undefined }],
      ["version 3", { ...doc, version: 3 }],
      [
        "bytes not base64",
        { ...doc, langgraph: { ...lg, checkpoints: [{ ...cp0, checkpoint: "not base64!" }, ...lg.checkpoints.slice(1)] } },
      ],
      ["unknown forkpoint checkpoint", { ...doc, langgraph: { ...lg, checkpoints: [{ ...cp0, fpCheckpointId: "cp_nowhere" }] } }],
      ["unknown start", { ...doc, langgraph: { ...lg, startCheckpointId: "cp_nowhere" } }],
      ["a checkpoint twice", { ...doc, langgraph: { ...lg, checkpoints: [cp0, cp0] } }],
      ["a value twice", { ...doc, langgraph: { ...lg, values: [lg.values[0], lg.values[0]] } }],
      ["a field missing", { ...doc, langgraph: { ...lg, writes: undefined } }],
      ["a field too many", { ...doc, langgraph: { ...lg, extra: 1 } }],
      ["a NUL in the thread id", { ...doc, langgraph: { ...lg, threadId: "t\u00001" } }],
      ["a fractional write index", { ...doc, langgraph: { ...lg, writes: [{ ...w0, idx: 0.5 }] } }],
      ["a write twice", { ...doc, langgraph: { ...lg, writes: [w0, w0] } }],
    ];
    for (const [what, document] of bad) {
      const error = await b.importSession(document as SessionExport, { userId: "alice" }).catch((e: unknown) => e);
      expect(error, what).toBeInstanceOf(ValidationError);
    }
    expect(await dumpStore(b)).toEqual(empty);
  });

  it("keeps the forkpoint checkpoints LangGraph's rows stand on, even expired ones", async () => {
    const { fp: a, sessionId } = await twoTurns();
    const s = await a.getSession(sessionId, { userId: "alice" });
    const first = (await a.exportSession(sessionId, { userId: "alice" })).langgraph!;
    const expired = [first.startCheckpointId, first.checkpoints[0]!.fpCheckpointId];
    for (const id of expired) await s.expire(id);
    const doc = await a.exportSession(sessionId, { userId: "alice" });
    for (const id of expired) expect(doc.checkpoints.find((c) => c.id === id)?.expiresAt, id).not.toBeNull();

    const { fp: b } = dbs.open();
    await b.importSession(doc, { userId: "alice" });
    expect(JSON.stringify(await b.exportSession(sessionId, { userId: "alice" }))).toBe(JSON.stringify(doc));
    const out = await countingGraph(b).invoke({ messages: [new HumanMessage("third")] }, thread("t1"));
    expect(out.turns).toBe(3);
  });

  it("still writes a session that holds no thread as version 1, and imports version 1 documents", async () => {
    const a = sqlite();
    const s = await a.createSession({ userId: "alice", title: "plain" });
    await s.append({ role: "user", content: "hi" });
    const doc = await a.exportSession(s.id, { userId: "alice" });
    expect(doc.version).toBe(1);
    expect("langgraph" in doc).toBe(false);
    const { fp: b } = dbs.open();
    await b.importSession(doc, { userId: "alice" });
    expect(JSON.stringify(await b.exportSession(s.id, { userId: "alice" }))).toBe(JSON.stringify(doc));
  });

  it("clones a thread's session as a plain session: the thread stays the source's", async () => {
    const { fp: a, sessionId } = await twoTurns();
    const copy = await a.clone(sessionId, { userId: "alice" });
    expect((await a.exportSession(copy.id, { userId: "alice" })).version).toBe(1);
    expect((await new ForkpointSaver(a, { userId: "alice" }).sessionFor("t1", { userId: "alice" })).id).toBe(sessionId);
  });
});
