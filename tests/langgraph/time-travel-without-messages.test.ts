// LangGraph time travel on a thread whose turns add no message (no messages channel): a node's calls are the only
// entries after the older checkpoint, and the run (or updateState) from it still forks and undoes the later turns' calls.
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { appendLineTool, readOrNull, tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

const concat = () => Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] });
const Turn = Annotation.Root({ turn: Annotation<number>(), seen: concat() });
const Root = Annotation.Root({ turn: Annotation<number>(), seen: concat(), memory: Annotation<string[]>() });

/**
 * Thread "t" of alice: each turn appends "t<turn>" to `file` through the thread's session, in a root node, or in a
 * `checkpointer: true` subgraph that keeps every turn's line in its own memory (the root shows it as `memory`).
 */
function appendingGraph(saver: ForkpointSaver, file: string, memory: boolean) {
  const append = async (turn: number) => {
    await (await saver.sessionFor("t", { userId: "alice" })).invoke("append_line", { path: file, line: `t${turn}` });
    return { seen: [`t${turn}`] };
  };
  if (!memory)
    return new StateGraph(Root)
      .addNode("n", (st) => append(st.turn))
      .addEdge(START, "n")
      .addEdge("n", END)
      .compile({ checkpointer: saver });
  const sub = new StateGraph(Turn)
    .addNode("n", (st) => append(st.turn))
    .addEdge(START, "n")
    .addEdge("n", END)
    .compile({ checkpointer: true });
  return new StateGraph(Root)
    .addNode("sub", async (st) => {
      const out = await sub.invoke({ turn: st.turn });
      return { seen: [`t${st.turn}`], memory: out.seen };
    })
    .addEdge(START, "sub")
    .addEdge("sub", END)
    .compile({ checkpointer: saver });
}

describe.each(["sync", "async"] as const)("LangGraph time travel over turns without messages (durability %s)", (durability) => {
  it.each([
    ["a run", "invoke", false],
    ["updateState", "update", false],
    ["a run, with a memory subgraph", "invoke", true],
    ["updateState, with a memory subgraph", "update", true],
  ] as const)("time travel by %s forks from turn 1 and undoes turns 2-3's calls", async (_, how, memory) => {
    const { fp } = dbs.open({ tools: [appendLineTool()] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const file = path.join(tempDir(), "log");
    const graph = appendingGraph(saver, file, memory);
    const config = { configurable: { thread_id: "t" }, durability };
    await graph.invoke({ turn: 1 }, config);
    const afterOne = (await graph.getState(config)).config;
    await graph.invoke({ turn: 2 }, config);
    await graph.invoke({ turn: 3 }, config);
    expect(readOrNull(file)).toBe("t1\nt2\nt3\n");

    let out;
    if (how === "update") {
      await graph.updateState(afterOne, { seen: ["note"] });
      expect(readOrNull(file)).toBe("t1\n");
      out = await graph.invoke({ turn: 9 }, config);
      expect(out.seen).toEqual(["t1", "note", "t9"]);
    } else {
      out = await graph.invoke({ turn: 9 }, { ...afterOne, durability });
      expect(out.seen).toEqual(["t1", "t9"]);
    }
    expect(readOrNull(file)).toBe("t1\nt9\n");
    if (memory) expect(out.memory).toEqual(["t1", "t9"]);
    const session = await saver.sessionFor("t", { userId: "alice" });
    expect(await session.branches()).toHaveLength(2);
  });
});
