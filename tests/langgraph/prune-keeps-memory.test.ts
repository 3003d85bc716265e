// keep_latest keeps a `checkpointer: true` subgraph's memory of every turn a kept checkpoint of its parent stands after.
import fs from "node:fs";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { Annotation, Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { makeTempDir, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

const Sub = Annotation.Root({
  mem: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  seen: Annotation<string>(),
});
const Root = Annotation.Root({ ...MessagesAnnotation.spec, seen: Annotation<string>() });

/** An `append_line` tool on a real file: its undo cuts the file back to its size before. */
function appendTool() {
  return defineTool<{ file: string; line: string }, { sizeBefore: number }>({
    name: "append_line",
    run: ({ file, line }) => {
      const sizeBefore = fs.existsSync(file) ? fs.statSync(file).size : 0;
      fs.appendFileSync(file, `${line}\n`);
      return { sizeBefore };
    },
    undo: ({ args, result }) => fs.truncateSync(args.file, result.sizeBefore),
  });
}

/**
 * A root graph over a memory subgraph (added as its node, invoked in its node, or the node of a plain subgraph invoked
 * in its node) that asks Q1 then Q2, appends each answer to a file and remembers them all: `seen` is its memory after
 * the turn.
 */
function memoryGraph(shape: "node" | "call" | "plain") {
  const { fp } = dbs.open({ tools: [appendTool()] });
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const file = path.join(makeTempDir(), "answers.txt");
  const ask = (name: string, q: string) => async (st: typeof Sub.State) => {
    const a = `${name}=${interrupt(q) as string}`;
    await (await saver.sessionFor("t", { userId: "alice" })).invoke("append_line", { file, line: a });
    return { mem: [a], seen: [...st.mem, a].join(",") };
  };
  const sub = new StateGraph(Sub)
    .addNode("a1", ask("a1", "Q1"))
    .addNode("a2", ask("a2", "Q2"))
    .addEdge(START, "a1")
    .addEdge("a1", "a2")
    .addEdge("a2", END)
    .compile({ checkpointer: true });
  // "plain": the node of a plain subgraph (a namespace per task) invoked in the root's node; it follows the root.
  const plain = new StateGraph(Sub).addNode("sub", sub).addEdge(START, "sub").addEdge("sub", END).compile();
  const graph = new StateGraph(Root)
    .addNode("sub", shape === "node" ? sub : async () => ({ seen: (await (shape === "plain" ? plain : sub).invoke({})).seen }))
    .addEdge(START, "sub")
    .addEdge("sub", END)
    .compile({ checkpointer: saver });
  const lines = () => (fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter(Boolean).join(",") : "");
  let n = 0;
  const config = { configurable: { thread_id: "t" } };
  /** One turn (its message run from `from`, else the head): the answers to Q1 and Q2; the subgraph's memory after it. */
  const turn = async (p: string, q: string, from: object = config) => {
    n++;
    await graph.invoke({ messages: [new HumanMessage(`u${n}`)] }, from);
    await graph.invoke(new Command({ resume: p }), config);
    return String((await graph.invoke(new Command({ resume: q }), config)).seen);
  };
  return { saver, graph, turn, lines };
}

describe.each(["node", "call", "plain"] as const)("keep_latest and a memory subgraph (%s)", (shape) => {
  const config = { configurable: { thread_id: "t" } };

  it("a rollback to a user's checkpoint after the prune goes on with the memory of the turns before it", async () => {
    const { saver, turn, lines } = memoryGraph(shape);
    await turn("p1", "q1");
    const s = await saver.sessionFor("t", { userId: "alice" });
    const c = await s.checkpoint({ name: "after turn 1" });
    await turn("p2", "q2");
    await turn("p3", "q3");
    await saver.prune(["t"]);
    await s.rollback(c.id);
    expect(lines()).toBe("a1=p1,a2=q1");
    expect(await turn("x1", "x2")).toBe("a1=p1,a2=q1,a1=x1,a2=x2");
    expect(lines()).toBe("a1=p1,a2=q1,a1=x1,a2=x2");
  });

  it("a run from a checkpoint the prune kept goes on with the memory it stood after, not the turns undone", async () => {
    const { saver, graph, turn, lines } = memoryGraph(shape);
    await turn("p1", "q1");
    await (await saver.sessionFor("t", { userId: "alice" })).checkpoint({ name: "after turn 1" });
    await turn("p2", "q2");
    await turn("p3", "q3");
    await saver.prune(["t"]);
    let afterOne: typeof Root.State | undefined;
    let at: object | undefined;
    for await (const state of graph.getStateHistory(config)) {
      if (state.values.seen === "a1=p1,a2=q1" && state.next.length === 0) [afterOne, at] = [state.values, state.config];
    }
    expect(afterOne).toBeDefined();
    expect(await turn("x1", "x2", at)).toBe("a1=p1,a2=q1,a1=x1,a2=x2");
    expect(lines()).toBe("a1=p1,a2=q1,a1=x1,a2=x2");
  });

  it("a branch switched back to after the prune goes on with the memory of all its turns", async () => {
    const { saver, turn, lines } = memoryGraph(shape);
    await turn("p1", "q1");
    const s = await saver.sessionFor("t", { userId: "alice" });
    const b1 = (await s.info()).currentBranchId;
    const c = await s.checkpoint({ name: "after turn 1" });
    await turn("p2", "q2");
    await turn("p3", "q3");
    await s.rollback(c.id);
    expect(await turn("y1", "y2")).toBe("a1=p1,a2=q1,a1=y1,a2=y2");
    await saver.prune(["t"]);
    await s.switchBranch(b1);
    expect(lines()).toBe("a1=p1,a2=q1,a1=p2,a2=q2,a1=p3,a2=q3");
    expect(await turn("z1", "z2")).toBe("a1=p1,a2=q1,a1=p2,a2=q2,a1=p3,a2=q3,a1=z1,a2=z2");
  });
});
