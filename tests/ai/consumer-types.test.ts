// A strict TypeScript consumer's code (compiled by `npm run lint`): the adapters take and give the frameworks' own
// types (typed UIMessages, ModelMessage[], ToolSets, Agents sessions and tools) without a cast.
import { Agent, Runner, tool as agentTool, type AgentInputItem, type Session } from "@openai/agents";
import {
  convertToModelMessages,
  generateText,
  isStepCount,
  streamText,
  tool,
  type InferUITools,
  type ModelMessage,
  type UIMessage,
} from "ai";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import type { SessionHandle } from "../../src/index.js";
import {
  aiCheckpointTools,
  loadChat,
  loadModelMessages,
  saveChat,
  saveModelMessages,
  undoableTools,
  type SaveResult,
} from "../../src/ai/index.js";
import { ForkpointSession, undoableAgentTools } from "../../src/openai-agents/index.js";
import { tempDatabases } from "../helpers.js";
import { ScriptedModel, reply } from "../openai-agents/fake-model.js";
import { scriptedModel, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

const appTools = {
  write_note: tool({
    inputSchema: z.object({ path: z.string(), text: z.string() }),
    execute: async ({ path }) => ({ written: path, bytes: 3 }),
  }),
  ask_user: tool({ inputSchema: z.object({ question: z.string() }), outputSchema: z.string() }),
  // ai@7's typed tool context: declared by contextSchema, given per request as toolsContext.
  lookup: tool({
    inputSchema: z.object({ q: z.string() }),
    contextSchema: z.object({ apiKey: z.string() }),
    execute: async ({ q }, { context }) => ({ q, key: context.apiKey.length }),
  }),
};
type ChatMessage = UIMessage<{ createdAt: number } | null, { chart: { title: string } }, InferUITools<typeof appTools>>;

/** A route handler as the persistence guide writes it, typed end to end. */
async function chatRoute(s: SessionHandle, messages: ChatMessage[]): Promise<Response> {
  const saved: SaveResult = await saveChat(s, messages);
  void saved;
  const toolsContext = { lookup: { apiKey: "k" } };
  const wrapped = undoableTools(
    s,
    appTools,
    {
      write_note: async ({ args, result }) => {
        expectTypeOf(args).toEqualTypeOf<{ path: string; text: string }>();
        expectTypeOf(result).toEqualTypeOf<{ written: string; bytes: number }>();
      },
      lookup: ({ result }) => void expectTypeOf(result).toEqualTypeOf<{ q: string; key: number }>(),
    },
    { toolsContext },
  );
  expectTypeOf(wrapped).toEqualTypeOf<typeof appTools>();
  const tools = { ...wrapped, ...aiCheckpointTools(s) };
  // Compiled, never called: the wrapped tools still declare lookup's context, so a loop without it does not compile.
  // @ts-expect-error toolsContext is missing
  const withoutContext = () => streamText({ model: scriptedStreamModel([]), tools, prompt: "p" });
  void withoutContext;
  const result = streamText({
    model: scriptedStreamModel([[text("hi")]]),
    tools,
    toolsContext,
    messages: await convertToModelMessages(messages),
    stopWhen: isStepCount(3),
  });
  return result.toUIMessageStreamResponse<ChatMessage>({
    originalMessages: messages,
    onEnd: async ({ messages: all }) => void (await saveChat(s, all)),
  });
}

describe("a strict consumer's types", () => {
  it("compiles and runs: typed UIMessages, ModelMessages, ToolSets, an Agents Session and tools", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const first: ChatMessage = { id: "u1", role: "user", metadata: { createdAt: 1 }, parts: [{ type: "text", text: "hi" }] };
    await (await chatRoute(s, [first])).text();
    const loaded = await loadChat<ChatMessage>(s);
    expectTypeOf(loaded).toEqualTypeOf<ChatMessage[]>();
    expect(loaded).toHaveLength(2);
    // Framework values go into forkpoint's own calls too.
    await s.append({ role: "user", content: loaded[0]!.parts });

    const prompt: ModelMessage[] = await convertToModelMessages(loaded);
    const r = await generateText({ model: scriptedModel([[text("ok")]]), messages: prompt });
    const t = await fp.createSession({ userId: "u" });
    await saveModelMessages(t, [...prompt, ...r.response.messages]);
    const back: ModelMessage[] = await loadModelMessages(t);
    expect(back.length).toBe(prompt.length + r.response.messages.length);

    const memory: Session = new ForkpointSession(t);
    const items: AgentInputItem[] = await memory.getItems(2);
    expect(items).toHaveLength(2);
    const agentTools = undoableAgentTools(
      t,
      [agentTool({ name: "noop", description: "n", parameters: z.object({}), execute: async () => "ok" })],
      { noop: () => undefined },
    );
    const agent = new Agent({ name: "a", tools: agentTools, model: new ScriptedModel([[reply("done")]]) });
    const run = await new Runner({ tracingDisabled: true }).run(agent, "hi", { session: memory });
    expect(run.finalOutput).toBe("done");
  });
});
