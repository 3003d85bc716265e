// A memory subgraph that asks "Q1" then "Q2", sending each answer through the thread's session: the graph the
// resume-from-history tests (one branch, and another branch's) share.
import { Annotation, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import type { ForkpointSaver } from "../../src/langgraph/index.js";

const Sub = Annotation.Root({
  mem: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  seen: Annotation<string>(),
});
const Root = Annotation.Root({ ...MessagesAnnotation.spec, seen: Annotation<string>() });

/**
 * The root's "sub" is a memory subgraph (added as the node, or invoked inside it) whose nodes ask "Q1", then "Q2",
 * each sending its answer through the thread's session and remembering it: `seen` lists the answers it remembers.
 */
export function asksTwiceGraph(saver: ForkpointSaver, shape: "node" | "call") {
  const ask = (question: string) => async (state: typeof Sub.State) => {
    const answer = interrupt(question) as string;
    await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: answer });
    return { mem: [answer], seen: [...state.mem, answer].join(",") };
  };
  const sub = new StateGraph(Sub)
    .addNode("a1", ask("Q1"))
    .addNode("a2", ask("Q2"))
    .addEdge(START, "a1")
    .addEdge("a1", "a2")
    .addEdge("a2", END)
    .compile({ checkpointer: true });
  const root =
    shape === "node"
      ? new StateGraph(Root).addNode("sub", sub)
      : new StateGraph(Root).addNode("sub", async () => ({ seen: (await sub.invoke({})).seen }));
  return root.addEdge(START, "sub").addEdge("sub", END).compile({ checkpointer: saver });
}
