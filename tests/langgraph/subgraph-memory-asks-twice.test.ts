// A `checkpointer: true` subgraph whose one node asks twice, rolled back to the step: it asks on from the answers since.
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { Annotation, Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/**
 * The root runs subgraph "mid" (nested: "mid" runs "leaf"), whose one node asks Q1 then Q2 and logs both answers. With
 * `plainAbove`, the graph between the root and the asking one is a plain subgraph (only the asking one keeps memory).
 */
function asksTwiceGraph(saver: ForkpointSaver, memory: boolean, nested: boolean, plainAbove = false) {
  const checkpointer = memory ? true : undefined;
  const ask = new StateGraph(State)
    .addNode("ask", () => ({ log: [`ans ${interrupt("Q1") as string}+${interrupt("Q2") as string}`] }))
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile({ checkpointer });
  const sub = nested
    ? new StateGraph(State)
        .addNode("leaf", async () => ({ log: [`L[${(await ask.invoke({ messages: [] })).log.join(",")}]`] }))
        .addEdge(START, "leaf")
        .addEdge("leaf", END)
        .compile({ checkpointer: plainAbove ? undefined : checkpointer })
    : ask;
  return new StateGraph(State)
    .addNode("mid", async () => ({ messages: [new AIMessage(`mid:${(await sub.invoke({ messages: [] })).log.join(",")}`)] }))
    .addEdge(START, "mid")
    .addEdge("mid", END)
    .compile({ checkpointer: saver });
}

/**
 * One turn answered p then q, a rollback to a checkpoint taken at a wait of the step (a user's at Q1 or at Q2, or
 * LangGraph's own of the step), then resumes r1, r2, r3: the last message after each.
 */
async function rolledBack(
  memory: boolean,
  nested: boolean,
  at: "Q1" | "Q2" | "langgraph",
  durability: "async" | "sync" | "exit",
  plainAbove = false,
) {
  const { fp } = dbs.open();
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const graph = asksTwiceGraph(saver, memory, nested, plainAbove);
  const config = { configurable: { thread_id: "t" }, durability };
  const last = (out: { messages: { content: unknown }[] }) => String(out.messages.at(-1)!.content);
  await graph.invoke({ messages: [new HumanMessage("go")] }, config);
  const s = await saver.sessionFor("t", { userId: "alice" });
  const lgId = (await graph.getState(config)).config.configurable!.checkpoint_id as string;
  let cp = at === "Q1" ? await s.checkpoint({ name: "cp" }) : undefined;
  await graph.invoke(new Command({ resume: "p" }), config);
  if (at === "Q2") cp = await s.checkpoint({ name: "cp" });
  const seen = [last(await graph.invoke(new Command({ resume: "q" }), config))];
  if (at === "langgraph")
    cp = (await s.listCheckpoints({})).items.find(
      (c) => (c.metadata as { langgraph?: { checkpointId?: string } } | null)?.langgraph?.checkpointId === lgId,
    );
  await s.rollback(cp!.id);
  for (const v of ["r1", "r2", "r3"]) seen.push(last(await graph.invoke(new Command({ resume: v }), config)));
  return seen;
}

describe("a checkpointer: true subgraph whose node asks twice, after a rollback to its step", () => {
  for (const nested of [false, true]) {
    const done = nested ? "mid:L[ans p+q]" : "mid:ans p+q";
    const redone = nested ? "mid:L[ans r1+r2]" : "mid:ans r1+r2";
    for (const at of ["Q1", "Q2", "langgraph"] as const) {
      it(`${nested ? "nested " : ""}asks Q2 after the first resume and finishes on the second (checkpoint at ${at})`, async () => {
        // A subgraph without checkpointer: true does so: the step asks Q1 again, then Q2.
        expect(await rolledBack(false, nested, at, "async")).toEqual([done, "go", redone, redone]);
        for (const durability of ["async", "sync", "exit"] as const) {
          expect([durability, ...(await rolledBack(true, nested, at, durability))]).toEqual([durability, done, "go", redone, redone]);
        }
      });
    }
  }

  for (const at of ["Q1", "Q2"] as const) {
    it(`under a plain subgraph, asks Q2 after the first resume and finishes on the second (checkpoint at ${at})`, async () => {
      for (const durability of ["async", "sync", "exit"] as const) {
        expect([durability, ...(await rolledBack(true, true, at, durability, true))]).toEqual([
          durability,
          "mid:L[ans p+q]",
          "go",
          "mid:L[ans r1+r2]",
          "mid:L[ans r1+r2]",
        ]);
      }
    });
  }
});
