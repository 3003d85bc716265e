// Test setup the LangGraph suites share: graphs on a saver, ways to write and read messages, gates for runs at once.
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { Annotation, Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { ConflictError, defineTool } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";

/** A chat graph whose bot answers "echo: <last message>". */
export function echoGraph(saver: ForkpointSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode("bot", (state) => ({ messages: [new AIMessage(`echo: ${String(state.messages.at(-1)!.content)}`)] }))
    .addEdge(START, "bot")
    .addEdge("bot", END)
    .compile({ checkpointer: saver });
}

/** A graph whose one node asks "approve?" (an interrupt) and answers "approved: <the resume value>". */
export function approvalGraph(saver: ForkpointSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode("ask", () => {
      const answer = interrupt("approve?") as string;
      return { messages: [new AIMessage(`approved: ${answer}`)] };
    })
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: saver });
}

/** A state of one log, each node's entries appended. No channel is messages. */
export const Log = Annotation.Root({ log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });

/**
 * Thread "t" of alice: "act" journals a call ("charge") through the thread's session and "other" asks `question` (an
 * interrupt), side by side after "plan"; then "after" sends a receipt. `runs.act` counts the runs of "act".
 */
export function chargeThenReceiptGraph(saver: ForkpointSaver, question: string) {
  const runs = { act: 0 };
  const sessionOf = () => saver.sessionFor("t", { userId: "alice" });
  const graph = new StateGraph(Log)
    .addNode("plan", () => ({ log: ["plan"] }))
    .addNode("act", async () => {
      runs.act++;
      await (await sessionOf()).invoke("send", { t: "charge" });
      return { log: ["charged"] };
    })
    .addNode("other", () => ({ log: [`approved: ${interrupt(question) as string}`] }))
    .addNode("after", async () => {
      await (await sessionOf()).invoke("send", { t: "receipt" });
      return { log: ["receipt"] };
    })
    .addEdge(START, "plan")
    .addEdge("plan", "act")
    .addEdge("plan", "other")
    .addEdge("act", "after")
    .addEdge("other", "after")
    .addEdge("after", END)
    .compile({ checkpointer: saver });
  return { graph, runs };
}

/** Messages as "type:content" lines, easy to compare. */
export const texts = (messages: BaseMessage[]) => messages.map((m) => `${m.getType()}:${String(m.content)}`);

/** A graph input of one user message. */
export const say = (text: string) => ({ messages: [new HumanMessage(text)] });

/** A "send" tool whose effect is `sent` gaining its text (its undo takes it out): what a node's call did to the world. */
export function sendTool(sent: string[]) {
  return defineTool<{ t: string }, null>({
    name: "send",
    run: (args) => {
      sent.push(args.t);
      return null;
    },
    undo: ({ args }) => {
      sent.splice(sent.indexOf(args.t), 1);
    },
  });
}

/** A gate a test opens once: `wait()` resolves after `open()`. */
export function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, wait: () => opened };
}

/**
 * A saver that tells when the put of a checkpoint holding a given number of messages has settled (landed or refused):
 * LangGraph stores a step's checkpoint while the next step's nodes already run, so a node under way does not mean its
 * step's checkpoint is in.
 */
export class LandingSaver extends ForkpointSaver {
  readonly #settled = new Map<number, ReturnType<typeof latch>>();
  /** Settles once a put of a checkpoint whose messages channel holds `count` messages has settled. */
  settledWith(count: number): Promise<void> {
    return this.#latch(count).wait();
  }
  override async put(...args: Parameters<ForkpointSaver["put"]>) {
    const list = (args[1].channel_values as Record<string, unknown> | undefined)?.messages;
    try {
      return await super.put(...args);
    } finally {
      if (Array.isArray(list)) this.#latch(list.length).open();
    }
  }
  #latch(count: number) {
    let gate = this.#settled.get(count);
    if (!gate) this.#settled.set(count, (gate = latch()));
    return gate;
  }
}

/** How a run ended: "ok", a `ConflictError`'s code, or the error's text. */
export const outcome = (r: PromiseSettledResult<unknown>) =>
  r.status === "fulfilled" ? "ok" : r.reason instanceof ConflictError ? r.reason.code : String(r.reason);

/** A serializer whose work waits for `hold` while it is set: the put it serves waits with it. */
export class HeldSerializer extends JsonPlusSerializer {
  hold: Promise<void> | null = null;
  override async dumpsTyped(value: unknown): Promise<[string, Uint8Array]> {
    if (this.hold) await this.hold;
    return super.dumpsTyped(value);
  }
}

/**
 * Node A asks q1 then q2 and sends both answers; node B, beside it, asks qb and sends its answer. `waits` maps each
 * open question to its interrupt id; `resume` answers one question by id.
 */
export function asksTwiceBesideOne(saver: ForkpointSaver, send: (t: string) => Promise<unknown>) {
  const graph = new StateGraph(Log)
    .addNode("A", async () => {
      const v1 = interrupt("q1") as string;
      const v2 = interrupt("q2") as string;
      await send(`A:${v1},${v2}`);
      return { log: [`A:${v1},${v2}`] };
    })
    .addNode("B", async () => {
      const v = interrupt("qb") as string;
      await send(`qb=${v}`);
      return { log: [`qb=${v}`] };
    })
    .addEdge(START, "A")
    .addEdge(START, "B")
    .addEdge("A", END)
    .addEdge("B", END)
    .compile({ checkpointer: saver });
  const config = { configurable: { thread_id: "t" }, durability: "sync" as const };
  const waits = async () =>
    Object.fromEntries((await graph.getState(config)).tasks.flatMap((t) => t.interrupts).map((i) => [i.value as string, i.id as string]));
  const resume = async (q: string, v: string) => graph.invoke(new Command({ resume: { [(await waits())[q]!]: v } }), config);
  return { graph, config, waits, resume };
}
