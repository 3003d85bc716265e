// A thread whose subgraph asks twice, exported one namespace at a time and imported in either order: a rollback to a
// user's checkpoint taken at the subgraph's second wait asks that question again, and the next resume answers it.
import { HumanMessage } from "@langchain/core/messages";
import { Annotation, Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { appendFileSync, existsSync, readFileSync, statSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defineTool, type Forkpoint } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { makeTempDir, removeDir, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const config = { configurable: { thread_id: "t" } };

/** append_line on a real file; its undo cuts the file back to its size before. */
const appendLine = defineTool<{ path: string; line: string }, { sizeBefore: number }>({
  name: "append_line",
  run: ({ path, line }) => {
    const sizeBefore = existsSync(path) ? statSync(path).size : 0;
    appendFileSync(path, `${line}\n`);
    return { sizeBefore };
  },
  undo: ({ args, result }) => truncateSync(args.path, result.sizeBefore),
});

const Sub = Annotation.Root({
  mem: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  seen: Annotation<string>(),
  turn: Annotation<number>(),
});
const Root = Annotation.Root({ ...MessagesAnnotation.spec, seen: Annotation<string>(), turn: Annotation<number>() });

/**
 * The root runs node "sub": a subgraph (`checkpointer: true` when `memory`, else plain) whose nodes "a1" and "a2" ask
 * "Q1" then "Q2" (with the turn's number), append each answer to `file` through the thread's session, and keep it in
 * `mem`.
 */
function build(fp: Forkpoint, file: string, memory: boolean) {
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const ask = (key: string, question: string) => async (state: typeof Sub.State) => {
    const v = interrupt(`${question} t${state.turn}`) as string;
    await (await saver.sessionFor("t", { userId: "alice" })).invoke("append_line", { path: file, line: `${key}=${v}` });
    return { mem: [`${key}=${v}`], seen: [...state.mem, `${key}=${v}`].join(",") };
  };
  const sub = new StateGraph(Sub)
    .addNode("a1", ask("a1", "Q1"))
    .addNode("a2", ask("a2", "Q2"))
    .addEdge(START, "a1")
    .addEdge("a1", "a2")
    .addEdge("a2", END);
  return new StateGraph(Root)
    .addNode("sub", memory ? sub.compile({ checkpointer: true }) : sub.compile())
    .addEdge(START, "sub")
    .addEdge("sub", END)
    .compile({ checkpointer: saver });
}

type Graph = ReturnType<typeof build>;
const resume = async (graph: Graph, value: string) => (await graph.invoke(new Command({ resume: value }), config)).seen;
/** The nodes the subgraph waits in (its state as the root's task shows it), none once the step is done. */
const waiting = async (graph: Graph) => {
  const sub = (await graph.getState(config, { subgraphs: true })).tasks[0]?.state as { next: string[] } | undefined;
  return [...(sub?.next ?? [])];
};

describe("a thread imported one namespace at a time", () => {
  for (const memory of [true, false])
    for (const rootFirst of [true, false])
      it(`(${memory ? "memory" : "plain"} subgraph, root's first: ${rootFirst}) asks the question it waited on at the checkpoint`, async () => {
        const dir = makeTempDir();
        try {
          const file = join(dir, "answers.txt");
          const { fp: a } = dbs.open({ tools: [appendLine] });
          let graph = build(a, file, memory);
          await graph.invoke({ messages: [new HumanMessage("u1")], turn: 1 }, config);
          await resume(graph, "p1");
          await resume(graph, "q1");
          await graph.invoke({ messages: [new HumanMessage("u2")], turn: 2 }, config);
          await resume(graph, "p2");
          const c = await (await new ForkpointSaver(a, { userId: "alice" }).sessionFor("t", { userId: "alice" })).checkpoint({ name: "C" });
          expect(await resume(graph, "q2")).toBe(memory ? "a1=p1,a2=q1,a1=p2,a2=q2" : "a1=p2,a2=q2");

          const docs = [];
          for (const info of (await a.listSessions({ userId: "alice" })).items)
            docs.push(await a.exportSession(info.id, { userId: "alice" }));
          docs.sort((x, y) => Number(y.langgraph!.checkpointNs === "") - Number(x.langgraph!.checkpointNs === ""));
          if (!rootFirst) docs.reverse();
          expect(docs[0]!.langgraph!.checkpointNs === "").toBe(rootFirst);
          const { fp: b } = dbs.open({ tools: [appendLine] });
          for (const d of docs) await b.importSession(d, { userId: "alice" });

          graph = build(b, file, memory);
          await (await new ForkpointSaver(b, { userId: "alice" }).sessionFor("t", { userId: "alice" })).rollback(c.id);
          expect(await waiting(graph)).toEqual(["a2"]);
          expect(await resume(graph, "z")).toBe(memory ? "a1=p1,a2=q1,a1=p2,a2=z" : "a1=p2,a2=z");
          expect(await waiting(graph)).toEqual([]);
          // The import neither replays nor undoes the calls made on the first database: the resume's call appends.
          expect(readFileSync(file, "utf8")).toBe("a1=p1\na2=q1\na1=p2\na2=q2\na2=z\n");
        } finally {
          removeDir(dir);
        }
      });
});
