// A resume by id from an older checkpoint after an append: a refusal fitting the durability, and the way on.
import { AIMessage } from "@langchain/core/messages";
import { Annotation, Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { say, sendTool } from "./helpers.js";

const dbs = tempDatabases();

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/** "plan" answers; then "act" charges and "other" asks, side by side. */
function waitingThread() {
  const sent: string[] = [];
  const { fp } = dbs.open({ tools: [sendTool(sent)] });
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const graph = new StateGraph(State)
    .addNode("plan", () => ({ log: ["plan"], messages: [new AIMessage("planning")] }))
    .addNode("act", async () => {
      await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: "charge" });
      return { log: ["charged"] };
    })
    .addNode("other", () => ({ log: [`ok ${interrupt("ok?") as string}`] }))
    .addEdge(START, "plan")
    .addEdge("plan", "act")
    .addEdge("plan", "other")
    .addEdge("act", END)
    .addEdge("other", END)
    .compile({ checkpointer: saver });
  return { sent, saver, graph };
}

const refusal = (run: Promise<unknown>) =>
  run.then(
    () => undefined,
    (e: unknown) => e as { code?: string; message: string },
  );

describe.each(["async", "sync"] as const)('a resume from an older checkpoint after an append (durability "%s")', (durability) => {
  const config = { configurable: { thread_id: "t" }, durability };

  it("refuses the node's call without advising the durability the run has already", async () => {
    const { sent, saver, graph } = waitingThread();
    await graph.invoke(say("go"), config);
    const waiting = (await graph.getState(config)).config;
    const s = await saver.sessionFor("t", { userId: "alice" });
    await s.append({ role: "user", content: "hold on" });
    const error = await refusal(graph.invoke(new Command({ resume: "yes" }), { ...waiting, durability }));
    expect(error?.code).toBe("SESSION_MOVED");
    expect(error?.message).not.toContain('durability "async" or "sync"');
    expect(error?.message).toContain("rollback");
    expect(sent).toEqual(["charge"]);
  });

  it("a rollback to that checkpoint first lets the thread resume there", async () => {
    const { sent, saver, graph } = waitingThread();
    await graph.invoke(say("go"), config);
    const waitingId = (await graph.getState(config)).config.configurable!.checkpoint_id as string;
    const s = await saver.sessionFor("t", { userId: "alice" });
    await s.append({ role: "user", content: "hold on" });
    const holding = (await s.listCheckpoints({})).items.find(
      (c) => (c.metadata as { langgraph?: { checkpointId?: string } }).langgraph?.checkpointId === waitingId,
    )!;
    await s.rollback(holding.id);
    const out = await graph.invoke(new Command({ resume: "yes" }), config);
    expect(out.log).toEqual(["plan", "charged", "ok yes"]);
    expect(out.messages.map((m) => String(m.content))).toEqual(["go", "planning"]);
    expect(sent).toEqual(["charge"]);
  });
});

describe('a run from an older checkpoint under durability "exit"', () => {
  it("advises another durability or a rollback first", async () => {
    const { saver, graph } = waitingThread();
    const config = { configurable: { thread_id: "t" }, durability: "sync" as const };
    await graph.invoke(say("go"), config);
    const waiting = (await graph.getState(config)).config;
    await (await saver.sessionFor("t", { userId: "alice" })).append({ role: "user", content: "hold on" });
    const error = await refusal(graph.invoke(new Command({ resume: "yes" }), { ...waiting, durability: "exit" }));
    expect(error?.code).toBe("SESSION_MOVED");
    expect(error?.message).toContain('durability "async" or "sync"');
    expect(error?.message).toContain("rollback");
  });
});
