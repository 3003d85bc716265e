// ForkpointSaver under a real LangGraph.js graph: threads become sessions, messages are kept once each, time travel
// forks a branch (message versions), interrupts resume, threads survive a reopen and are deleted whole.
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { Annotation, Command, END, INTERRUPT, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { JsonPlusSerializer, type SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { gunzip, gzip } from "node:zlib";
import { describe, expect, it } from "vitest";
import { ConflictError, IntegrityError, NotFoundError, PayloadTooLargeError, ValidationError } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { startWorker } from "../fixtures/workers.js";
import { tempDatabases } from "../helpers.js";
import { approvalGraph, echoGraph, texts } from "./helpers.js";
import { dumpOf, sqlOn } from "../fixtures/backend.js";

const dbs = tempDatabases();

const thread = (id: string, checkpointId?: string) => ({
  configurable: { thread_id: id, ...(checkpointId ? { checkpoint_id: checkpointId } : {}) },
});

describe("ForkpointSaver with a LangGraph graph", () => {
  it("keeps a thread as a forkpoint session: its messages, once each, and a checkpoint per step", async () => {
    const { fp, path } = dbs.open();
    const graph = echoGraph(new ForkpointSaver(fp, { userId: "alice" }));
    await graph.invoke({ messages: [new HumanMessage("hi")] }, thread("t1"));
    const out = await graph.invoke({ messages: [new HumanMessage("book a hotel")] }, thread("t1"));
    expect(texts(out.messages)).toEqual(["human:hi", "ai:echo: hi", "human:book a hotel", "ai:echo: book a hotel"]);

    const {
      items: [info],
    } = await fp.listSessions({ userId: "alice" });
    expect(info!.title).toBe("t1");
    const s = await fp.getSession(info!.id, { userId: "alice" });
    const history = await s.history();
    expect(history.map((m) => [m.role, m.content])).toEqual([
      ["user", "hi"],
      ["assistant", "echo: hi"],
      ["user", "book a hotel"],
      ["assistant", "echo: book a hotel"],
    ]);
    // The message's own id (LangChain's) is its client id.
    expect(history[0]!.clientId).toBe(out.messages[0]!.id);
    // Each invoke puts three checkpoints (input, step -1; loop, steps 0 and 1), plus the thread's empty start.
    const cps = await fp.listCheckpoints({ userId: "alice", sessionId: s.id, limit: 100 });
    expect(cps.items).toHaveLength(7);
    expect(cps.items[0]!.metadata).toMatchObject({ langgraph: { threadId: "t1", source: "loop", step: 4 } });

    // Messages are stored as entries once: no channel value holds the list, and there are exactly four messages.
    expect(await sqlOn(path, "SELECT count(*) AS n FROM lg_blobs WHERE channel = 'messages'")).toEqual([{ n: 0 }]);
    expect(await sqlOn(path, "SELECT count(*) AS n FROM entries WHERE kind = 'message'")).toEqual([{ n: 4 }]);
  });

  it("goes on from where it was after the database is reopened", async () => {
    const path = dbs.path();
    const first = dbs.open({ path }).fp;
    await echoGraph(new ForkpointSaver(first)).invoke({ messages: [new HumanMessage("one")] }, thread("t"));
    await first.close();

    const { fp } = dbs.open({ path });
    const graph = echoGraph(new ForkpointSaver(fp));
    expect(texts((await graph.getState(thread("t"))).values.messages)).toEqual(["human:one", "ai:echo: one"]);
    const out = await graph.invoke({ messages: [new HumanMessage("two")] }, thread("t"));
    expect(texts(out.messages)).toEqual(["human:one", "ai:echo: one", "human:two", "ai:echo: two"]);
    const {
      items: [info],
    } = await fp.listSessions({ userId: "langgraph" });
    const s = await fp.getSession(info!.id, { userId: "langgraph" });
    expect((await s.history()).map((m) => m.content)).toEqual(["one", "echo: one", "two", "echo: two"]);
    expect(await fp.verify()).toMatchObject({ ok: true });
  });

  it("time travel forks a branch: the old answer and the new one are two versions of that message", async () => {
    const { fp } = dbs.open();
    const graph = echoGraph(new ForkpointSaver(fp, { userId: "alice" }));
    await graph.invoke({ messages: [new HumanMessage("hi")] }, thread("t"));
    await graph.invoke({ messages: [new HumanMessage("plan a trip")] }, thread("t"));

    // Back to the end of the first turn, and a different second question from there.
    const past = [];
    for await (const snap of graph.getStateHistory(thread("t"))) past.push(snap);
    const afterFirst = past.find((p) => p.values.messages?.length === 2 && p.next.length === 0)!;
    const forked = await graph.invoke({ messages: [new HumanMessage("plan a party")] }, afterFirst.config);
    expect(texts(forked.messages)).toEqual(["human:hi", "ai:echo: hi", "human:plan a party", "ai:echo: plan a party"]);
    // LangGraph now reads the fork as the thread's latest state.
    expect(texts((await graph.getState(thread("t"))).values.messages).at(-1)).toBe("ai:echo: plan a party");

    const {
      items: [info],
    } = await fp.listSessions({ userId: "alice" });
    const s = await fp.getSession(info!.id, { userId: "alice" });
    const history = await s.history();
    expect(history.map((m) => m.content)).toEqual(["hi", "echo: hi", "plan a party", "echo: plan a party"]);
    const versions = await s.versions(history[2]!.id);
    expect(versions.count).toBe(2);
    expect(versions.versions.map((v) => v.message.content)).toEqual(["plan a trip", "plan a party"]);
    expect(versions.index).toBe(1);
    // One new branch, forked at the end of the first turn; the first branch is untouched.
    expect((await s.branches()).length).toBe(2);
    const old = await graph.getState(thread("t", past[0]!.config.configurable!.checkpoint_id));
    expect(texts(old.values.messages).at(-1)).toBe("ai:echo: plan a trip");
  });

  it("a state update at an old checkpoint forks there: the messages are that checkpoint's, not the latest's", async () => {
    const { fp } = dbs.open();
    const State = Annotation.Root({ ...MessagesAnnotation.spec, mood: Annotation<string>() });
    const graph = new StateGraph(State)
      .addNode("bot", (state) => ({ messages: [new AIMessage(`echo: ${String(state.messages.at(-1)!.content)}`)], mood: "busy" }))
      .addEdge(START, "bot")
      .addEdge("bot", END)
      .compile({ checkpointer: new ForkpointSaver(fp) });
    await graph.invoke({ messages: [new HumanMessage("one")] }, thread("u"));
    await graph.invoke({ messages: [new HumanMessage("two")] }, thread("u"));
    const past = [];
    for await (const snap of graph.getStateHistory(thread("u"))) past.push(snap);
    const afterFirst = past.find((p) => p.values.messages?.length === 2 && p.next.length === 0)!;

    await graph.updateState(afterFirst.config, { mood: "calm" });
    const now = await graph.getState(thread("u"));
    expect(texts(now.values.messages)).toEqual(["human:one", "ai:echo: one"]);
    expect(now.values.mood).toBe("calm");
    const {
      items: [info],
    } = await fp.listSessions({ userId: "langgraph" });
    const s = await fp.getSession(info!.id, { userId: "langgraph" });
    expect((await s.history()).map((m) => m.content)).toEqual(["one", "echo: one"]);
    // Going on from there appends to the fork.
    const out = await graph.invoke({ messages: [new HumanMessage("three")] }, thread("u"));
    expect(texts(out.messages)).toEqual(["human:one", "ai:echo: one", "human:three", "ai:echo: three"]);
    expect((await s.history()).map((m) => m.content)).toEqual(["one", "echo: one", "three", "echo: three"]);
  });

  it("an interrupt is stored as a pending write and the graph resumes from it", async () => {
    const { fp } = dbs.open();
    const graph = approvalGraph(new ForkpointSaver(fp));
    const first = await graph.invoke({ messages: [new HumanMessage("go")] }, thread("i"));
    expect((first as unknown as Record<string, { value: unknown }[]>)[INTERRUPT]?.[0]?.value).toBe("approve?");
    const state = await graph.getState(thread("i"));
    expect(state.next).toEqual(["ask"]);
    const done = await graph.invoke(new Command({ resume: "yes" }), thread("i"));
    expect(texts(done.messages)).toEqual(["human:go", "ai:approved: yes"]);
  });

  it("reads only the saver's own user's threads, and deletes a thread with everything it recorded", async () => {
    const { fp } = dbs.open();
    const alice = echoGraph(new ForkpointSaver(fp, { userId: "alice" }));
    const bob = echoGraph(new ForkpointSaver(fp, { userId: "bob" }));
    await alice.invoke({ messages: [new HumanMessage("secret")] }, thread("shared-id"));
    expect((await bob.getState(thread("shared-id"))).values).toEqual({});
    await bob.invoke({ messages: [new HumanMessage("mine")] }, thread("shared-id"));
    expect(texts((await alice.getState(thread("shared-id"))).values.messages)[0]).toBe("human:secret");

    const {
      items: [info],
    } = await fp.listSessions({ userId: "alice" });
    await new ForkpointSaver(fp, { userId: "alice" }).deleteThread("shared-id");
    await expect(fp.getSession(info!.id, { userId: "alice" })).rejects.toBeInstanceOf(NotFoundError);
    expect((await alice.getState(thread("shared-id"))).values).toEqual({});
    expect(texts((await bob.getState(thread("shared-id"))).values.messages)[0]).toBe("human:mine");
    expect(await fp.verify()).toMatchObject({ ok: true });
  });

  it("deletes a thread's namespaces in one transaction: one that cannot go (a move in progress) keeps them all", async () => {
    const { fp, path } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const cp = (id: string) => ({ v: 4, id, ts: new Date().toISOString(), channel_values: {}, channel_versions: {}, versions_seen: {} });
    const meta = { source: "input" as const, step: -1, parents: {} };
    await saver.put({ configurable: { thread_id: "d", checkpoint_ns: "" } }, cp("1"), meta, {});
    await saver.put({ configurable: { thread_id: "d", checkpoint_ns: "child:1" } }, cp("2"), meta, {});
    const sessions = async () => (await fp.listSessions({ userId: "langgraph" })).items.map((i) => i.id).sort();
    const [a, b] = await sessions();
    await sqlOn(
      path,
      `INSERT INTO moves (id, session_id, kind, spec, status, pid, pid_start, created_at)
      VALUES ('mv_stuck', $1, 'rollback', '{}', 'running', 1, NULL, 0)`,
      [b],
    );
    const before = await dumpOf(path);
    await expect(saver.deleteThread("d")).rejects.toMatchObject({ code: "MOVE_IN_PROGRESS" });
    expect(await dumpOf(path)).toEqual(before);
    expect(await sessions()).toEqual([a, b]);
    await sqlOn(path, `DELETE FROM moves WHERE id = 'mv_stuck'`);
    await saver.deleteThread("d");
    expect(await sessions()).toEqual([]);
    expect(await saver.getTuple({ configurable: { thread_id: "d", checkpoint_ns: "child:1" } })).toBeUndefined();
  });

  it("two deleteThread calls on one thread at once both resolve (as MemorySaver's do)", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    await echoGraph(saver).invoke({ messages: [new HumanMessage("one")] }, thread("dd"));
    await expect(Promise.all([saver.deleteThread("dd"), new ForkpointSaver(fp).deleteThread("dd")])).resolves.toEqual([
      undefined,
      undefined,
    ]);
    expect((await fp.listSessions({ userId: "langgraph" })).items).toEqual([]);
  });

  it("two savers on one Forkpoint putting to the same thread at once both finish (puts to a thread land one at a time)", async () => {
    const path = dbs.path();
    const run = startWorker(fileURLToPath(new URL("../fixtures/two-savers-worker.ts", import.meta.url)), [path]);
    // Before puts were serialized, each undid the other's landing forever, starving the event loop: kill, don't hang
    // (after 90 s: a child's start and graph take over 30 s on a loaded machine).
    const timer = setTimeout(() => run.child.kill("SIGKILL"), 90_000);
    const { code, stdout, stderr } = await run.done;
    clearTimeout(timer);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    const lines = stdout.trim().split("\n");
    expect(lines.at(-1)).toBe("done");
    const answers = lines.slice(0, 2).map((l) => JSON.parse(l) as string[]);
    // Each invoke sees its own turn answered; the later one goes on from the earlier one's turn or forks beside it.
    for (const [i, text] of ["p", "q"].entries()) expect(answers[i]!.slice(-2)).toEqual([text, `echo: ${text}`]);
    const fp = dbs.open({ path }).fp;
    expect(await fp.verify()).toMatchObject({ ok: true });
  }, 120_000);

  it("lists only the checkpoint a config names (as MemorySaver does), else the thread's, newest first", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const graph = echoGraph(saver);
    await graph.invoke({ messages: [new HumanMessage("one")] }, thread("l"));
    const all = [];
    for await (const t of saver.list(thread("l"))) all.push(t.config.configurable?.checkpoint_id as string);
    expect(all.length).toBeGreaterThan(2);
    expect([...all].sort().reverse()).toEqual(all);
    const named = [];
    for await (const t of saver.list(thread("l", all[1]))) named.push(t.config.configurable?.checkpoint_id);
    expect(named).toEqual([all[1]]);
    // The older `thread_ts` names a checkpoint too, as LangGraph's getCheckpointId reads a config.
    const legacy = { configurable: { thread_id: "l", thread_ts: all[1] } };
    expect((await saver.getTuple(legacy))?.config.configurable?.checkpoint_id).toBe(all[1]);
    const viaTs = [];
    for await (const t of saver.list(legacy)) viaTs.push(t.config.configurable?.checkpoint_id);
    expect(viaTs).toEqual([all[1]]);
  });

  it("refuses bad input with typed errors and a forkpoint checkpoint holding a LangGraph one cannot be deleted", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const cp = { v: 4, id: "1", ts: new Date().toISOString(), channel_values: {}, channel_versions: {}, versions_seen: {} };
    const meta = { source: "input" as const, step: -1, parents: {} };
    await expect(saver.put({}, cp, meta, {})).rejects.toBeInstanceOf(ValidationError);
    await expect(saver.put({ configurable: { checkpoint_ns: "" } }, cp, meta, {})).rejects.toBeInstanceOf(ValidationError);
    await expect(saver.putWrites({ configurable: { thread_id: "x" } }, [["a", 1]], "task")).rejects.toBeInstanceOf(ValidationError);
    await expect(saver.putWrites({ configurable: { thread_id: "x", checkpoint_id: "c" } }, [null as never], "task")).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expect(
      saver.putWrites({ configurable: { thread_id: "x", checkpoint_id: "c" } }, [["a", 1]], "task", 5 as never),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(saver.getTuple(null as never)).rejects.toBeInstanceOf(ValidationError);
    await expect(saver.list({}, { limit: Number.NaN }).next()).rejects.toBeInstanceOf(ValidationError);
    expect(() => new ForkpointSaver({} as never)).toThrow(ValidationError);
    expect(() => new ForkpointSaver(fp, { userId: " " })).toThrow(ValidationError);

    const config = await saver.put({ configurable: { thread_id: "x" } }, cp, meta, {});
    await expect(saver.put({ configurable: { thread_id: "x" } }, cp, meta, {})).rejects.toMatchObject({ code: "CHECKPOINT_EXISTS" });
    const {
      items: [info],
    } = await fp.listSessions({ userId: "langgraph" });
    const s = await fp.getSession(info!.id, { userId: "langgraph" });
    const { items } = await fp.listCheckpoints({ userId: "langgraph", sessionId: s.id });
    const held = items.find((c) => c.name !== "langgraph:start")!;
    await expect(s.deleteCheckpoint(held.id)).rejects.toBeInstanceOf(ConflictError);
    expect((await saver.getTuple(config))?.checkpoint.id).toBe("1");
  });

  it("a message over the limits is refused before anything is written, even from an old checkpoint", async () => {
    const { fp, path } = dbs.open({ limits: { maxPayloadBytes: 1_000 } });
    const saver = new ForkpointSaver(fp);
    const msgs = [
      { role: "user", content: "a" },
      { role: "assistant", content: "b" },
    ];
    const put = (parent: string | undefined, id: string, messages: unknown[], step: number) =>
      saver.put(
        { configurable: { thread_id: "t", ...(parent ? { checkpoint_id: parent } : {}) } },
        { v: 4, id, ts: new Date().toISOString(), channel_values: { messages }, channel_versions: { messages: step }, versions_seen: {} },
        { source: "loop", step, parents: {} },
        { messages: step },
      );
    await put(undefined, "01", msgs.slice(0, 1), 1);
    await put("01", "02", msgs, 2);
    const before = await dumpOf(path);
    // From the first checkpoint (a fork), with a different second message that is too large.
    const error = await put("01", "03", [msgs[0], { role: "assistant", content: "x".repeat(2_000) }], 3).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect(await dumpOf(path)).toEqual(before);
  });

  it("verifies what it reads: a changed message or a changed older checkpoint is an IntegrityError, in getTuple and list", async () => {
    const { fp, path } = dbs.open();
    const graph = echoGraph(new ForkpointSaver(fp));
    await graph.invoke({ messages: [new HumanMessage("one")] }, thread("v"));
    await graph.invoke({ messages: [new HumanMessage("two")] }, thread("v"));
    const history = async () => {
      const all = [];
      for await (const snap of graph.getStateHistory(thread("v"))) all.push(snap);
      return all;
    };
    expect((await history()).length).toBe(6);

    // An older checkpoint's checksum (checked on the shared lineage, not re-read in full).
    await sqlOn(
      path,
      `UPDATE checkpoints SET checksum = 'x' WHERE seq = (SELECT seq FROM checkpoints WHERE name IS NULL ORDER BY seq LIMIT 1 OFFSET 1)`,
    );
    await expect(history()).rejects.toBeInstanceOf(IntegrityError);
    expect(texts((await graph.getState(thread("v"))).values.messages)).toHaveLength(4);

    // A message's text. This saver verified the thread's chain when it read it, and keeps it: it goes on returning
    // what it verified, never the changed text. A saver that has not read it yet checks the whole chain.
    await sqlOn(path, `UPDATE entries SET content = '"evil"' WHERE kind = 'message' AND position = 1`);
    expect(texts((await graph.getState(thread("v"))).values.messages)).toEqual(["human:one", "ai:echo: one", "human:two", "ai:echo: two"]);
    await expect(echoGraph(new ForkpointSaver(fp)).getState(thread("v"))).rejects.toBeInstanceOf(IntegrityError);
    await expect(echoGraph(new ForkpointSaver(dbs.open({ path }).fp)).getState(thread("v"))).rejects.toBeInstanceOf(IntegrityError);
  });

  it("reads a thread's next checkpoint verified on top of what it verified before, across forks, as a fresh saver reads it", async () => {
    const { fp, path } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const graph = echoGraph(saver);
    const values = async (g: ReturnType<typeof echoGraph>, config: Parameters<typeof graph.getState>[0] = thread("w")) =>
      texts((await g.getState(config)).values.messages);
    for (const word of ["one", "two", "three"]) {
      await graph.invoke({ messages: [new HumanMessage(word)] }, thread("w"));
      expect(await values(graph)).toEqual(await values(echoGraph(new ForkpointSaver(fp))));
    }
    // Back to after "one", then on from there: a fork whose lineage shares only a prefix with the one read last.
    const history = [];
    for await (const snap of graph.getStateHistory(thread("w"))) history.push(snap);
    const afterOne = history.find((h) => texts(h.values.messages).join() === "human:one,ai:echo: one")!;
    expect(await values(graph, afterOne.config)).toEqual(["human:one", "ai:echo: one"]);
    await graph.invoke({ messages: [new HumanMessage("uno")] }, afterOne.config);
    const expected = ["human:one", "ai:echo: one", "human:uno", "ai:echo: uno"];
    expect(await values(graph)).toEqual(expected);
    expect(await values(echoGraph(new ForkpointSaver(fp)))).toEqual(expected);
    // What this saver wrote it keeps as verified (it hashed it): damaged on disk afterwards, it is not returned, and
    // another saver, which reads the chain in full, refuses it.
    await graph.invoke({ messages: [new HumanMessage("dos")] }, thread("w"));
    await sqlOn(path, `UPDATE entries SET content = '"evil"' WHERE seq = (SELECT max(seq) FROM entries WHERE kind = 'message')`);
    expect(await values(graph)).toEqual([...expected, "human:dos", "ai:echo: dos"]);
    await expect(values(echoGraph(new ForkpointSaver(fp)))).rejects.toBeInstanceOf(IntegrityError);
  });

  it("catches damage to messages another saver (or process) wrote since this saver last read the thread", async () => {
    const { fp, path } = dbs.open();
    const reader = echoGraph(new ForkpointSaver(fp));
    await reader.invoke({ messages: [new HumanMessage("one")] }, thread("x"));
    await echoGraph(new ForkpointSaver(fp)).invoke({ messages: [new HumanMessage("two")] }, thread("x"));
    await sqlOn(path, `UPDATE entries SET content = '"evil"' WHERE seq = (SELECT max(seq) FROM entries WHERE kind = 'message')`);
    await expect(reader.getState(thread("x"))).rejects.toBeInstanceOf(IntegrityError);
  });

  it("takes a step's writes before its checkpoint's put has run (LangGraph queues puts; a slow serializer shows it)", async () => {
    const { fp } = dbs.open();
    const inner = new JsonPlusSerializer();
    const gz: SerializerProtocol = {
      async dumpsTyped(v) {
        const [t, b] = await inner.dumpsTyped(v);
        return [`gz:${t}`, new Uint8Array(await promisify(gzip)(b))];
      },
      async loadsTyped(t, b) {
        return inner.loadsTyped(t.slice(3), await promisify(gunzip)(typeof b === "string" ? Buffer.from(b) : b));
      },
    };
    const graph = echoGraph(new ForkpointSaver(fp, { serde: gz }));
    await graph.invoke({ messages: [new HumanMessage("one")] }, thread("gz"));
    const out = await graph.invoke({ messages: [new HumanMessage("two")] }, thread("gz"));
    expect(texts(out.messages)).toEqual(["human:one", "ai:echo: one", "human:two", "ai:echo: two"]);
    expect(texts((await graph.getState(thread("gz"))).values.messages)).toHaveLength(4);
  });

  it("a refused put writes nothing: an oversized first message of a new thread, a checkpoint id already stored", async () => {
    const { fp, path } = dbs.open({ limits: { maxPayloadBytes: 1_000 } });
    const saver = new ForkpointSaver(fp);
    const put = (parent: string | undefined, id: string, messages: unknown[], step: number) =>
      saver.put(
        { configurable: { thread_id: "t", ...(parent ? { checkpoint_id: parent } : {}) } },
        { v: 4, id, ts: new Date().toISOString(), channel_values: { messages }, channel_versions: { messages: step }, versions_seen: {} },
        { source: "loop", step, parents: {} },
        { messages: step },
      );
    const empty = await dumpOf(path);
    expect(await put(undefined, "01", [{ role: "user", content: "x".repeat(2_000) }], 1).catch((e: unknown) => e)).toBeInstanceOf(
      PayloadTooLargeError,
    );
    expect(await dumpOf(path)).toEqual(empty);

    await put(undefined, "01", [{ role: "user", content: "a" }], 1);
    await put(
      "01",
      "02",
      [
        { role: "user", content: "a" },
        { role: "assistant", content: "b" },
      ],
      2,
    );
    const before = await dumpOf(path);
    // From the first checkpoint (which would fork) and with other messages (which would edit): refused first.
    expect(await put("01", "02", [{ role: "user", content: "c" }], 3).catch((e: unknown) => e)).toMatchObject({
      code: "CHECKPOINT_EXISTS",
    });
    expect(await dumpOf(path)).toEqual(before);
    // The thread's empty start (where puts without a parent fork from) cannot be deleted either.
    const {
      items: [info],
    } = await fp.listSessions({ userId: "langgraph" });
    const s = await fp.getSession(info!.id, { userId: "langgraph" });
    const start = (await fp.listCheckpoints({ userId: "langgraph", name: "langgraph:start" })).items[0]!;
    expect(await s.deleteCheckpoint(start.id).catch((e: unknown) => e)).toMatchObject({ code: "CHECKPOINT_IN_USE" });
  });

  it("a put from the saver's last checkpoint lands right after another saver moved the thread, or deleted it", async () => {
    const { fp } = dbs.open();
    const [a, b] = [new ForkpointSaver(fp), new ForkpointSaver(fp)];
    /** `step` null: a checkpoint that leaves the messages channel as its parent has it. */
    const put = (saver: ForkpointSaver, parent: string | undefined, id: string, messages: unknown[], step: number | null) =>
      saver.put(
        { configurable: { thread_id: "t", checkpoint_ns: "", ...(parent ? { checkpoint_id: parent } : {}) } },
        {
          v: 4,
          id,
          ts: new Date().toISOString(),
          channel_values: { messages },
          channel_versions: { messages: step ?? 0 },
          versions_seen: {},
        },
        { source: "loop", step: step ?? 0, parents: {} },
        step === null ? {} : { messages: step },
      );
    const read = async (saver: ForkpointSaver, id: string) =>
      (await saver.getTuple({ configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: id } }))!.checkpoint.channel_values
        .messages;
    const [one, two, three] = ["one", "two", "three"].map((content) => ({ role: "user", content }));
    await put(a, undefined, "01", [one], 1);
    await put(a, "01", "02", [one, two], 2);
    // b forks from the first checkpoint: the thread's head is no longer a's last checkpoint.
    await put(b, "01", "03", [...((await read(b, "01")) as unknown[]), { role: "assistant", content: "other" }], 3);
    await put(a, "02", "04", [one, two, three], 4);
    expect(await read(new ForkpointSaver(fp), "04")).toEqual([one, two, three]);
    expect(await read(new ForkpointSaver(fp), "03")).toEqual([one, { role: "assistant", content: "other" }]);
    expect(await put(a, "04", "04", [one, two, three, one], 5).catch((e: unknown) => e)).toMatchObject({ code: "CHECKPOINT_EXISTS" });
    // b deletes the thread and starts it again (a new session); a goes on from b's checkpoint.
    await b.deleteThread("t");
    await put(b, undefined, "05", [three], 6);
    await put(a, "05", "06", [three], null);
    await put(a, "06", "07", [three, one], 7);
    expect(await read(new ForkpointSaver(fp), "07")).toEqual([three, one]);
    expect(await a.getTuple({ configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: "04" } })).toBeUndefined();
    const sessions = (await fp.listSessions({ userId: "langgraph" })).items;
    expect(sessions).toHaveLength(1);
    expect((await (await fp.getSession(sessions[0]!.id, { userId: "langgraph" })).history()).map((m) => m.content)).toEqual([
      "three",
      "one",
    ]);
    expect(await fp.verify()).toMatchObject({ ok: true });
  });

  it("a node that pushes into the messages it was given (after an interrupt) has the pushed message stored too", async () => {
    const { fp } = dbs.open();
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("ask", (state) => {
        const answer = interrupt("?");
        state.messages.push(new AIMessage("note pushed in place"));
        return { messages: [new AIMessage(`got ${String(answer)}`)] };
      })
      .addEdge(START, "ask")
      .addEdge("ask", END)
      .compile({ checkpointer: new ForkpointSaver(fp) });
    await graph.invoke({ messages: [new HumanMessage("hi")] }, thread("p"));
    const out = await graph.invoke(new Command({ resume: "yes" }), thread("p"));
    expect(out.messages.map((m: BaseMessage) => m.content)).toEqual(["hi", "note pushed in place", "got yes"]);
    const {
      items: [info],
    } = await fp.listSessions({ userId: "langgraph" });
    const s = await fp.getSession(info!.id, { userId: "langgraph" });
    expect((await s.history()).map((m) => m.content)).toEqual(["hi", "note pushed in place", "got yes"]);
  });

  it("gives back what LangGraph's serializer wrote: a Set inside a message, and plain messages, from this saver and a fresh one", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const put = (parent: string | undefined, id: string, messages: unknown[], step: number) =>
      saver.put(
        { configurable: { thread_id: "s", ...(parent ? { checkpoint_id: parent } : {}) } },
        { v: 4, id, ts: new Date().toISOString(), channel_values: { messages }, channel_versions: { messages: step }, versions_seen: {} },
        { source: "loop", step, parents: {} },
        { messages: step },
      );
    const plain = [
      { role: "user", content: "one" },
      { role: "assistant", content: { text: 'a "lc": 1 string' } },
    ];
    await put(undefined, "01", plain, 1);
    const tagged = { role: "user", content: "two", tags: new Set(["a", "b"]) };
    await put("01", "02", [...plain, tagged], 2);
    for (const reader of [saver, new ForkpointSaver(fp)]) {
      const read = async (id: string) =>
        (await reader.getTuple({ configurable: { thread_id: "s", checkpoint_id: id } }))!.checkpoint.channel_values.messages as unknown[];
      expect(await read("01")).toStrictEqual(plain);
      const [, , third] = await read("02");
      expect((third as { tags: unknown }).tags).toBeInstanceOf(Set);
      expect([...(third as { tags: Set<string> }).tags]).toEqual(["a", "b"]);
    }
    // A subclass of LangGraph's serializer may read differently: plain lists go through it too.
    class Shouting extends JsonPlusSerializer {
      override async loadsTyped(type: string, data: Uint8Array | string): Promise<unknown> {
        const value = await super.loadsTyped(type, data);
        return type === "json" ? JSON.parse(JSON.stringify(value).replaceAll("one", "ONE")) : value;
      }
    }
    // So may LangGraph's own serializer with a method replaced on the instance.
    const patched = new JsonPlusSerializer();
    const loads = patched.loadsTyped.bind(patched);
    patched.loadsTyped = async (type, data) => {
      const value: unknown = await loads(type, data);
      return type === "json" ? JSON.parse(JSON.stringify(value).replaceAll("one", "ONE")) : value;
    };
    for (const serde of [new Shouting(), patched]) {
      const latest = await new ForkpointSaver(fp, { serde }).getTuple({ configurable: { thread_id: "s", checkpoint_id: "01" } });
      expect((latest!.checkpoint.channel_values.messages as { content: unknown }[])[0]!.content).toBe("ONE");
    }
  });

  it("a list its serializer cannot write is a ValidationError, after a taken checkpoint id is refused", async () => {
    const { fp, path } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const put = (parent: string | undefined, id: string, messages: unknown[], step: number) =>
      saver.put(
        { configurable: { thread_id: "b", ...(parent ? { checkpoint_id: parent } : {}) } },
        { v: 4, id, ts: new Date().toISOString(), channel_values: { messages }, channel_versions: { messages: step }, versions_seen: {} },
        { source: "loop", step, parents: {} },
        { messages: step },
      );
    const [one, two] = [
      { role: "user", content: "one" },
      { role: "user", content: "two" },
    ];
    await put(undefined, "01", [one], 1);
    await put("01", "02", [one, two], 2);
    const before = await dumpOf(path);
    const bad = { role: "user", content: 1n };
    expect(await put("02", "02", [one, two, bad], 3).catch((e: unknown) => e)).toMatchObject({ code: "CHECKPOINT_EXISTS" });
    const refused = await put("02", "03", [one, two, bad], 3).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ValidationError);
    expect(refused).toMatchObject({ field: "checkpoint.channel_values.messages" });
    expect(await dumpOf(path)).toEqual(before);
  });

  it("a node that rewrites a stored message in place (a redaction) is kept: the new text is a new version of it", async () => {
    const { fp } = dbs.open();
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("redact", (state) => {
        if (state.messages.at(-1)!.content === "thanks") {
          for (const m of state.messages) if (typeof m.content === "string") m.content = m.content.replace(/\d{4}-\d{4}/g, "[card]");
        }
        return { messages: [new AIMessage("noted")] };
      })
      .addEdge(START, "redact")
      .addEdge("redact", END)
      .compile({ checkpointer: new ForkpointSaver(fp) });
    for (const text of ["hello", "my card 1234-5678", "thanks"]) await graph.invoke({ messages: [new HumanMessage(text)] }, thread("r"));
    const expected = ["hello", "noted", "my card [card]", "noted", "thanks", "noted"];
    expect((await graph.getState(thread("r"))).values.messages.map((m: BaseMessage) => m.content)).toEqual(expected);
    const {
      items: [info],
    } = await fp.listSessions({ userId: "langgraph" });
    const s = await fp.getSession(info!.id, { userId: "langgraph" });
    const history = await s.history();
    expect(history.map((m) => m.content)).toEqual(expected);
    expect((await s.versions(history[2]!.id)).versions.map((v) => v.message.content)).toEqual(["my card 1234-5678", "my card [card]"]);
  });

  it("a rewrite deep inside a stored message (a content block's text) is kept too, as a new version", async () => {
    const { fp } = dbs.open();
    const text = (m: BaseMessage) => (m.content as { text: string }[])[0]!.text ?? m.content;
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("redact", (state) => {
        if (text(state.messages.at(-1)!) === "thanks") {
          for (const m of state.messages) {
            if (Array.isArray(m.content))
              for (const b of m.content as { text: string }[]) b.text = b.text.replace(/\d{4}-\d{4}/g, "[card]");
          }
        }
        return { messages: [new AIMessage({ content: [{ type: "text", text: "noted" }] })] };
      })
      .addEdge(START, "redact")
      .addEdge("redact", END)
      .compile({ checkpointer: new ForkpointSaver(fp) });
    for (const said of ["hello", "my card 1234-5678", "thanks"]) {
      await graph.invoke({ messages: [new HumanMessage({ content: [{ type: "text", text: said }] })] }, thread("d"));
    }
    const expected = ["hello", "noted", "my card [card]", "noted", "thanks", "noted"];
    const fresh = await new ForkpointSaver(fp).getTuple(thread("d"));
    expect((fresh!.checkpoint.channel_values.messages as BaseMessage[]).map(text)).toEqual(expected);
  });
});
