// POST /api/chat: useChat's request. The question is saved before the model runs, the answer after it, `after` its question.
import { convertToModelMessages, createIdGenerator, isStepCount, streamText, type LanguageModel, type UIMessage } from "ai";
import type { IfAt, SessionHandle } from "forkpoint";
import { saveChat, undoableTools } from "forkpoint/ai";
import { todoContext, todoUndos, todoTools, type TodoList } from "./todos.js";

const SYSTEM = "You are a helpful assistant. When the user asks you to add or remember something, call add_todo.";

/** The first question, as the chat's title in the sidebar. */
const titleOf = (m: UIMessage | undefined) =>
  m?.parts
    .map((p) => (p.type === "text" ? p.text : ""))
    .join(" ")
    .trim()
    .slice(0, 60) ?? "";

export async function answer(
  s: SessionHandle,
  messages: UIMessage[],
  model: LanguageModel,
  todos: TodoList,
  at: IfAt | undefined,
): Promise<Response> {
  // An edited question or a regenerate request forks here, before the model's tool calls, so they land on the new branch.
  // Only while the chat is where the page shows it (`at`: its branch and head): a tab another tab moved away from (an
  // undo, a rollback, another version picked) or asked on meanwhile is refused with SESSION_MOVED (409), nothing
  // written, and the page reads the chat again.
  const asked = await saveChat(s, messages, at ? { ifAt: at } : {});
  if (messages.length === 1) await s.update({ title: titleOf(messages[0]) });
  const toolsContext = todoContext({ sessionId: s.id });
  const result = streamText({
    model,
    system: SYSTEM,
    // A call the user stopped is saved without its result (docs/ai-sdk.md): left out, the next request still converts.
    messages: await convertToModelMessages(messages, { ignoreIncompleteToolCalls: true }),
    // Journaled on the session's track, so undo, edit, regenerate and rollback take the model's calls back; `after` the
    // question, so they land with the answer even when another tab adds to the chat meanwhile.
    tools: undoableTools(s, todoTools(todos), todoUndos(todos), { toolsContext, after: asked.lastMessageId }),
    toolsContext,
    stopWhen: isStepCount(5),
  });
  return result.toUIMessageStreamResponse({
    originalMessages: messages,
    // Server-side ids: the answer keeps its id when the page loads the chat again.
    generateMessageId: createIdGenerator({ prefix: "msg", size: 16 }),
    onEnd: async ({ messages: all }) => {
      // Right after its own question, even if the chat moved meanwhile (an edit or undo in another tab): then the
      // answer becomes a version there and the chat stays where the user put it.
      await saveChat(s, all, { after: asked.lastMessageId });
    },
  });
}
