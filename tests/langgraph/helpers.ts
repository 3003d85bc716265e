// Test setup the LangGraph suites share: a compiled echo chat graph on a saver, and short ways to write and read messages.
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { defineTool } from "../../src/index.js";
import type { ForkpointSaver } from "../../src/langgraph/index.js";

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
