// docs/ai-sdk.md's route without `at`, over a world of keys: the set-up the stale-tab and double-answer tests share.
import {
  convertToModelMessages,
  createIdGenerator,
  isStepCount,
  streamText,
  tool,
  type LanguageModel,
  type ToolSet,
  type UIMessage,
} from "ai";
import { z } from "zod";
import type { SessionHandle } from "../../src/index.js";
import { saveChat, undoableTools } from "../../src/ai/index.js";

export const user = (id: string, t: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text: t }] });

/** The world's keys: `put` adds one, `send` is the same tool needing approval, `ask` a client-side tool. */
export function worldTools(world: Set<string>) {
  const execute = async ({ k }: { k: string }) => (world.add(k), k);
  const tools = {
    put: tool({ inputSchema: z.object({ k: z.string() }), execute }),
    send: tool({ inputSchema: z.object({ k: z.string() }), execute, needsApproval: true }),
    ask: tool({ inputSchema: z.object({ k: z.string() }) }),
  } satisfies ToolSet;
  const undo = ({ args }: { args: { k: string } }) => void world.delete(args.k);
  return { tools, undos: { put: undo, send: undo } };
}

/** saveChat before the loop, tools `{ after }` its question, the answer saved in `onEnd` (and `onStepEnd` with `steps`). */
export async function guideRoute(
  s: SessionHandle,
  world: Set<string>,
  messages: UIMessage[],
  model: LanguageModel,
  steps = false,
): Promise<void> {
  const asked = await saveChat(s, messages);
  const after = asked.lastMessageId;
  const { tools, undos } = worldTools(world);
  const result = streamText({
    model,
    messages: await convertToModelMessages(messages, { ignoreIncompleteToolCalls: true }),
    tools: undoableTools(s, tools, undos, { after }),
    stopWhen: isStepCount(6),
  });
  let saved!: Promise<unknown>;
  const ended = new Promise<void>((resolve) => {
    const response = result.toUIMessageStreamResponse({
      originalMessages: messages,
      generateMessageId: createIdGenerator({ prefix: "msg", size: 16 }),
      ...(steps ? { onStepEnd: async ({ messages: all }) => void (await saveChat(s, all, { after })) } : {}),
      onEnd: async ({ messages: all }) => {
        saved = saveChat(s, all, { after });
        await saved.finally(resolve);
      },
    });
    void response.text();
  });
  await ended;
  await saved;
}
