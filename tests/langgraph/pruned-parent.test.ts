// A config kept from before a prune (`keep_latest`) names a checkpoint the thread no longer has. Reading it gives
// nothing (as for any unknown id); a run from it is refused (`NOT_FOUND`) rather than starting the thread over from
// its empty start, which would undo every call of the thread's head.
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointError, NotFoundError } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { sendTool, texts } from "./helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" }, durability: "sync" as const };

describe.each([
  ["a node calling a tool", true],
  ["a node without calls", false],
])("a run from a config whose checkpoint was pruned (%s)", (_, calls) => {
  it("is refused, the thread's head and its calls kept", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("bot", async (state) => {
        const t = String(state.messages.at(-1)!.content);
        if (calls) await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t });
        return { messages: [new AIMessage(`did ${t}`)] };
      })
      .addEdge(START, "bot")
      .addEdge("bot", END)
      .compile({ checkpointer: saver });
    for (const t of ["a", "b", "c"]) await graph.invoke({ messages: [{ role: "user", content: t }] }, thread);
    const history = [];
    for await (const h of graph.getStateHistory(thread)) history.push(h);
    const afterA = history.find((h) => h.values.messages?.length === 2 && h.next.length === 0)!;
    await saver.prune(["t"], { strategy: "keep_latest", userId: "alice" });
    expect(await saver.getTuple(afterA.config)).toBeUndefined();

    const run = graph.invoke({ messages: [{ role: "user", content: "d" }] }, { ...afterA.config, durability: "sync" });
    if (calls) await expect(run).rejects.toBeInstanceOf(ForkpointError);
    else await expect(run).rejects.toBeInstanceOf(NotFoundError);
    const head = await graph.getState(thread);
    expect(texts(head.values.messages)).toEqual(["human:a", "ai:did a", "human:b", "ai:did b", "human:c", "ai:did c"]);
    expect(sent).toEqual(calls ? ["a", "b", "c"] : []);
    expect((await fp.verify()).ok).toBe(true);
  });
});
