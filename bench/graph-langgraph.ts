// A real LangGraph graph on each checkpointer: StateGraph(MessagesAnnotation) with one node that answers, invoked once
// per turn on one thread with a LangChain HumanMessage, as an app would. Besides the savers' own puts and reads, each
// invoke pays LangGraph's loop and LangChain's deserialization of every message of the thread.
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { join } from "node:path";
import { openForkpoint } from "../src/index.js";
import { ForkpointSaver } from "../src/langgraph/index.js";
import { firstLastMedians, now, peakRssMB, tempDir } from "./util.js";

export interface GraphFigures {
  n: number;
  totalMs: number;
  /** Median invoke over the first and the last 10% of invokes. */
  firstMs: number;
  lastMs: number;
  /** `graph.getState(thread)` once all invokes are done. */
  getStateMs: number;
  peakRssMB: number;
}

const pad = (i: number) => `${i} ${"x".repeat(180)}`;

export async function runGraphChat(n: number, system: "peer" | "saver"): Promise<GraphFigures> {
  const { dir, cleanup } = tempDir(`graph-${system}`);
  const fp = system === "saver" ? openForkpoint({ path: join(dir, "forkpoint.db") }) : null;
  const saver: BaseCheckpointSaver = fp ? new ForkpointSaver(fp) : SqliteSaver.fromConnString(join(dir, "langgraph.db"));
  try {
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("bot", (s: { messages: BaseMessage[] }) => ({ messages: [new AIMessage(`reply ${pad(s.messages.length)}`)] }))
      .addEdge(START, "bot")
      .addEdge("bot", END)
      .compile({ checkpointer: saver });
    const thread = { configurable: { thread_id: "thread-1" } };
    const times: number[] = [];
    const t0 = now();
    for (let i = 0; i < n; i++) {
      const t = now();
      await graph.invoke({ messages: [new HumanMessage(`question ${pad(i)}`)] }, thread);
      times.push(now() - t);
    }
    const totalMs = now() - t0;
    const { firstMs, lastMs } = firstLastMedians(times);
    const t = now();
    const state = await graph.getState(thread);
    const getStateMs = now() - t;
    const count = (state.values as { messages: unknown[] }).messages.length;
    if (count !== 2 * n) throw new Error(`graph ${system}: ${count} messages in the state, expected ${2 * n}`);
    return { n, totalMs, firstMs, lastMs, getStateMs, peakRssMB: peakRssMB() };
  } finally {
    if (fp) await fp.close();
    else (saver as SqliteSaver).db.close();
    cleanup();
  }
}
