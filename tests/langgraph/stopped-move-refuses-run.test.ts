// A rollback of a thread's session stopped by a failing undo (`onUndoError: "stop"`) has undone calls whose results
// the thread's head still holds: the graph does not go on from that head (`MOVE_IN_PROGRESS`) until the move is
// called again and finishes, after which it goes on from the rollback's target.
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ConflictError, defineTool } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { Log } from "./helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" } };

describe("a stopped rollback of a thread's session", () => {
  it("refuses the graph's next run and read of the head until the move is called again", async () => {
    const sent: string[] = [];
    let failUndo: string | null = null;
    const send = defineTool<{ t: string }, null>({
      name: "send",
      run: (args) => {
        sent.push(args.t);
        return null;
      },
      undo: ({ args }) => {
        if (args.t === failUndo) {
          failUndo = null;
          throw new Error("the undo failed once");
        }
        sent.splice(sent.indexOf(args.t), 1);
      },
    });
    const { fp } = dbs.open({ tools: [send] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const St = Annotation.Root({ turn: Annotation<string>(), log: Log.spec.log });
    const graph = new StateGraph(St)
      .addNode("first", async (state) => {
        await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: `${state.turn}.1` });
        return { log: [`${state.turn}.1`] };
      })
      .addNode("second", async (state) => {
        await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: `${state.turn}.2` });
        return { log: [`${state.turn}.2`] };
      })
      .addEdge(START, "first")
      .addEdge("first", "second")
      .addEdge("second", END)
      .compile({ checkpointer: saver });
    await graph.invoke({ turn: "t1" }, thread);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const cp = await s.checkpoint({ name: "after t1" });
    await graph.invoke({ turn: "t2" }, thread);

    // The rollback undoes t2.2, then t2.1's undo fails: it stops, the session's branch unchanged.
    failUndo = "t2.1";
    await expect(s.rollback(cp.id, { onUndoError: "stop" })).rejects.toMatchObject({ code: "UNDO_FAILED" });
    expect(sent).toEqual(["t1.1", "t1.2", "t2.1"]);

    // The head would show t2.2, whose call is undone: neither a read of it nor a run goes on from it.
    const refused = (p: Promise<unknown>) =>
      p.then(
        () => "ok",
        (e: unknown) => (e instanceof ConflictError ? e.code : String(e)),
      );
    expect(await refused(graph.getState(thread))).toBe("MOVE_IN_PROGRESS");
    expect(await refused(graph.invoke({ turn: "t3" }, thread))).toBe("MOVE_IN_PROGRESS");
    expect(sent).toEqual(["t1.1", "t1.2", "t2.1"]);

    // Called again, the move finishes; the graph goes on from its target.
    await s.rollback(cp.id);
    expect(sent).toEqual(["t1.1", "t1.2"]);
    const out = await graph.invoke({ turn: "t3" }, thread);
    expect({ log: out.log, world: sent }).toEqual({ log: ["t1.1", "t1.2", "t3.1", "t3.2"], world: ["t1.1", "t1.2", "t3.1", "t3.2"] });
    expect((await fp.verify()).ok).toBe(true);
  });
});
