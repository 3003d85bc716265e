// A thread with a `checkpointer: true` subgraph, moved back to where the subgraph waits and imported elsewhere one
// namespace at a time, in either order: the subgraph waits there still, and the next resume answers it.
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { Annotation, Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const config = { configurable: { thread_id: "t" } };
const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/** Node "pre", then node "sub" running a memory subgraph whose node "ask" asks "Q?" and logs the answer. */
function build(fp: Forkpoint) {
  const sub = new StateGraph(State)
    .addNode("ask", () => ({ log: [`ans ${interrupt("Q?") as string}`] }))
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: true });
  return new StateGraph(State)
    .addNode("pre", () => ({ messages: [new AIMessage("pre")] }))
    .addNode("sub", async (state) => {
      const r = await sub.invoke({ messages: state.messages });
      return { log: r.log, messages: [new AIMessage(`sub:${r.log.join(",")}`)] };
    })
    .addEdge(START, "pre")
    .addEdge("pre", "sub")
    .addEdge("sub", END)
    .compile({ checkpointer: new ForkpointSaver(fp, { userId: "alice" }) });
}

const asked = (state: { tasks: { interrupts: { value?: unknown }[] }[] }) => state.tasks.flatMap((t) => t.interrupts).map((i) => i.value);

describe("a memory subgraph's thread imported one namespace at a time", () => {
  it.each([true, false])("(subgraph's first: %s) resumes the subgraph's wait the rollback went back to", async (subFirst) => {
    const { fp: a } = dbs.open();
    const graph = build(a);
    await graph.invoke({ messages: [new HumanMessage("go")] }, config);
    const s = await new ForkpointSaver(a, { userId: "alice" }).sessionFor("t", { userId: "alice" });
    const waiting = await s.checkpoint({ name: "waiting" });
    await graph.invoke(new Command({ resume: "no" }), config);
    await s.rollback(waiting.id);

    const docs = [];
    for (const info of (await a.listSessions({ userId: "alice" })).items) docs.push(await a.exportSession(info.id, { userId: "alice" }));
    docs.sort((x, y) => Number(x.langgraph!.checkpointNs === "") - Number(y.langgraph!.checkpointNs === ""));
    if (!subFirst) docs.reverse();
    expect(docs.map((d) => d.langgraph!.checkpointNs === "")).toEqual(subFirst ? [false, true] : [true, false]);
    const { fp: b } = dbs.open();
    for (const d of docs) await b.importSession(d, { userId: "alice" });

    const moved = build(b);
    expect(asked(await moved.getState(config))).toEqual(["Q?"]);
    const out = await moved.invoke(new Command({ resume: "yes" }), config);
    expect(out.messages.map((m) => m.content)).toEqual(["go", "pre", "sub:ans yes"]);
    expect(asked(await moved.getState(config))).toEqual([]);
  });
});
