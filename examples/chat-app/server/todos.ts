// The model's tool: add_todo writes a to-do list on disk (a world outside forkpoint); its undo takes the item off again.
import { tool } from "ai";
import type { AiToolsContext, AiToolUndos } from "forkpoint/ai";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

export interface Todo {
  /** The tool call that added it: a replay adds it again under the same id. */
  id: string;
  text: string;
}

/** One JSON file per chat session. */
export function todoList(dir: string) {
  mkdirSync(dir, { recursive: true });
  const file = (sessionId: string) => join(dir, `${sessionId}.json`);
  const read = (sessionId: string): Todo[] => {
    try {
      return JSON.parse(readFileSync(file(sessionId), "utf8")) as Todo[];
    } catch {
      return [];
    }
  };
  const write = (sessionId: string, todos: Todo[]) => writeFileSync(file(sessionId), JSON.stringify(todos, null, 2));
  return { read, write };
}

export type TodoList = ReturnType<typeof todoList>;

/** The AI SDK tools, as an app writes them; the session a call belongs to is the tool's context. */
export function todoTools(list: TodoList) {
  return {
    add_todo: tool({
      description: "Add an item to the user's to-do list",
      inputSchema: z.object({ text: z.string().describe("the item") }),
      contextSchema: z.object({ sessionId: z.string() }),
      execute: async ({ text }, { toolCallId, context }) => {
        const todos = list.read(context.sessionId).filter((t) => t.id !== toolCallId);
        list.write(context.sessionId, [...todos, { id: toolCallId, text }]);
        return { id: toolCallId, added: text };
      },
    }),
  };
}

export type TodoTools = ReturnType<typeof todoTools>;

/** How forkpoint takes each call back when the chat moves (undo, edit, regenerate, rollback). */
export function todoUndos(list: TodoList): AiToolUndos<TodoTools> {
  return {
    add_todo: ({ result }, ctx) =>
      list.write(
        ctx.sessionId,
        list.read(ctx.sessionId).filter((t) => t.id !== result.id),
      ),
  };
}

/** The context each tool gets for one session, in a loop (streamText's `toolsContext`) and in forkpoint's replays. */
export const todoContext = ({ sessionId }: { sessionId: string }): AiToolsContext<TodoTools> => ({ add_todo: { sessionId } });
