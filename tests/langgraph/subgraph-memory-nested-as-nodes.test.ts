// A memory subgraph added as a node of another added as a root's node keeps the answer a rollback's branch gave it.
import { HumanMessage } from "@langchain/core/messages";
import { Annotation, Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { sendTool } from "./helpers.js";

const dbs = tempDatabases();

const Leaf = Annotation.Root({
  mem: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  seen: Annotation<string>(),
});
const Outer = Annotation.Root({ ...MessagesAnnotation.spec, seen: Annotation<string>() });

/**
 * The root's node "mid" is a memory subgraph (with the root's messages) whose node "leaf" is a memory subgraph asking
 * "Q?", sending the answer through the thread's session and remembering it: `seen` lists the answers it remembers.
 */
function nestedAsNodes(saver: ForkpointSaver) {
  const leaf = new StateGraph(Leaf)
    .addNode("ask", async (state) => {
      const answer = interrupt("Q?") as string;
      await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: answer });
      return { mem: [answer], seen: [...state.mem, answer].join(",") };
    })
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: true });
  const mid = new StateGraph(Outer).addNode("leaf", leaf).addEdge(START, "leaf").addEdge("leaf", END).compile({ checkpointer: true });
  return new StateGraph(Outer).addNode("mid", mid).addEdge(START, "mid").addEdge("mid", END).compile({ checkpointer: saver });
}

describe.each(["sync", "async", "exit"] as const)("nested memory subgraphs added as nodes (durability %s)", (durability) => {
  it.each(["user", "LangGraph"] as const)(
    "remember the answer given after a rollback to the %s checkpoint at an older turn's wait",
    async (which) => {
      const sent: string[] = [];
      const { fp } = dbs.open({ tools: [sendTool(sent)] });
      const saver = new ForkpointSaver(fp, { userId: "alice" });
      const graph = nestedAsNodes(saver);
      const config = { configurable: { thread_id: "t" }, durability };
      const answer = async (value: string) => (await graph.invoke(new Command({ resume: value }), config)).seen as string;
      const turn = async (input: string, value: string) => {
        await graph.invoke({ messages: [new HumanMessage(input)] }, config);
        return answer(value);
      };
      expect(await turn("a", "y1")).toBe("y1");
      await graph.invoke({ messages: [new HumanMessage("b")] }, config);
      const s = await saver.sessionFor("t", { userId: "alice" });
      const waitingId = (await graph.getState(config)).config.configurable!.checkpoint_id as string;
      const mine = await s.checkpoint({ name: "waiting" });
      expect(await answer("y2")).toBe("y1,y2");
      // A turn after the one rolled back into: the mid's own session holds it, so its next put forks there.
      expect(await turn("c", "y3")).toBe("y1,y2,y3");
      const waiting = (await s.listCheckpoints({})).items.find(
        (c) => (c.metadata as { langgraph?: { checkpointId?: string } } | null)?.langgraph?.checkpointId === waitingId,
      )!;
      await s.rollback(which === "user" ? mine.id : waiting.id);
      expect(sent).toEqual(["y1"]);
      expect(await answer("z")).toBe("y1,z");
      expect(sent).toEqual(["y1", "z"]);
      // The next turn remembers the rollback's branch's answer, as the world holds it.
      expect(await turn("d", "w")).toBe("y1,z,w");
      expect(sent).toEqual(["y1", "z", "w"]);
    },
  );
});
