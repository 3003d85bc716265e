// A run whose memory subgraph is under way while another server's time travel forks the thread beside it: the run
// goes on (forks side by side both finish), and its subgraph's checkpoint belongs to the run's own branch, so the next
// turn remembers that run's turn (it was marked as put on the other run's fork, and forgotten).
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { Annotation, END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { LandingSaver, latch, say, sendTool } from "./helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" } };
const Sub = Annotation.Root({
  ...MessagesAnnotation.spec,
  seen: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/** A root graph whose node runs a memory subgraph: it sends the turn's text, then answers with every text it saw. */
function rememberingGraph(saver: ForkpointSaver, gate: () => Promise<void>, reached: () => void) {
  const sub = new StateGraph(Sub)
    .addNode("inner", async (state) => {
      const text = String(state.messages.at(-1)!.content);
      await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: text });
      if (text === "slow") {
        reached();
        await gate();
      }
      return { messages: [new AIMessage(`seen ${[...state.seen, text].join("/")}`)], seen: [text] };
    })
    .addEdge(START, "inner")
    .addEdge("inner", END)
    .compile({ checkpointer: true });
  return new StateGraph(MessagesAnnotation)
    .addNode("sub", async (state) => {
      const out = await sub.invoke({ messages: [state.messages.at(-1) as BaseMessage] });
      return { messages: [out.messages.at(-1)!] };
    })
    .addEdge(START, "sub")
    .addEdge("sub", END)
    .compile({ checkpointer: saver });
}

describe("a memory subgraph under way while another server's time travel forks beside its run", () => {
  for (const durability of ["async", "sync", "exit"] as const)
    it(`remembers the run's turn on the next one (${durability})`, async () => {
      const sent: string[] = [];
      const { fp, path } = dbs.open({ tools: [sendTool(sent)] });
      const saver = new LandingSaver(fp, { userId: "alice" });
      const gate = latch();
      const reached = latch();
      const graph = rememberingGraph(
        saver,
        () => gate.wait(),
        () => reached.open(),
      );
      const config = { ...thread, durability };
      // The node journals through the thread's session: the thread is stored by the first turn (under "exit", at its end).
      await graph.invoke(say("one"), { ...config, durability: durability === "exit" ? "sync" : durability });
      await graph.invoke(say("two"), config);
      const otherSaver = new ForkpointSaver(dbs.open({ path, tools: [sendTool(sent)] }).fp, { userId: "alice" });
      const other = rememberingGraph(
        otherSaver,
        async () => undefined,
        () => undefined,
      );
      const running = graph.invoke(say("slow"), config);
      running.catch(() => undefined);
      await reached.wait();
      // The run's step is stored before the other server reads the history (under "exit", nothing is until it ends).
      if (durability !== "exit") await saver.settledWith(5);
      const history = [];
      for await (const state of other.getStateHistory(thread)) history.push(state);
      const afterOne = history.find((state) => state.values.messages.length === 2 && state.next.length === 0)!;
      // Time travel whose node makes a call puts first ("exit" refuses such calls: its put would fork after them).
      await other.invoke(say("travel"), { ...afterOne.config, durability: durability === "exit" ? "async" : durability });
      gate.open();
      await running;
      const out = await graph.invoke(say("next"), config);
      expect(String(out.messages.at(-1)!.content)).toBe("seen one/two/slow/next");
      expect(sent).toEqual(["one", "two", "slow", "next"]);
    }, 30_000);
});
