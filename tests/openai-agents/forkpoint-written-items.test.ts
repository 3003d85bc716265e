// Messages written through forkpoint (an edit of the agent's answer in the CLI or the web view, the app's greeting
// appended with `s.append`) read back as items the SDK's models take: an assistant's as an assistant message item.
import { Agent, OpenAIResponsesModel, Runner, setTracingDisabled, tool, type AgentInputItem } from "@openai/agents";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ForkpointSession } from "../../src/openai-agents/index.js";
import { tempDatabases } from "../helpers.js";

setTracingDisabled(true);
const dbs = tempDatabases();

/** An agent on the SDK's Responses model over a client that records each request's input and answers "answer N". */
function respondingAgent() {
  const inputs: unknown[] = [];
  const client = {
    responses: {
      create: async (request: { input: unknown }) => {
        inputs.push(request.input);
        const n = inputs.length;
        const content = [{ type: "output_text", text: `answer ${n}`, annotations: [] }];
        const output = [{ type: "message", id: `msg_${n}`, role: "assistant", status: "completed", content }];
        return { id: `resp_${n}`, output, usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } };
      },
    },
  };
  const model = new OpenAIResponsesModel(client as never, "test-model");
  return { agent: new Agent({ name: "assistant", instructions: "Answer.", model }), inputs };
}

const assistantItem = (text: string): AgentInputItem => ({
  type: "message",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text }],
});

describe("ForkpointSession items written through forkpoint", () => {
  it("an edited answer is an assistant message item, and the next run sends it", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const memory = new ForkpointSession(s);
    const { agent, inputs } = respondingAgent();
    await new Runner().run(agent, "hello", { session: memory });
    const answer = (await s.history()).find((m) => m.role === "assistant")!;
    await s.edit(answer.id, { content: "a better answer" });
    expect(await memory.getItems()).toEqual([{ type: "message", role: "user", content: "hello" }, assistantItem("a better answer")]);

    const next = await new Runner().run(agent, "and then?", { session: memory });
    expect(next.finalOutput).toBe("answer 2");
    expect(JSON.stringify(inputs[1])).toContain("a better answer");
  });

  it("an appended greeting is one too; user and system messages stay plain input messages", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.append([
      { role: "system", content: "Be brief." },
      { role: "assistant", content: "Hi! How can I help?" },
      { role: "user", content: { text: "plan a trip" } },
    ]);
    const memory = new ForkpointSession(s);
    expect(await memory.getItems()).toEqual([
      { role: "system", content: "Be brief." },
      assistantItem("Hi! How can I help?"),
      { role: "user", content: '{"text":"plan a trip"}' },
    ]);
    const { agent } = respondingAgent();
    expect((await new Runner().run(agent, "to Lisbon", { session: memory })).finalOutput).toBe("answer 1");
  });

  it("an edited tool result answers its call, and the next run sends it", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const memory = new ForkpointSession(s);
    const inputs: unknown[] = [];
    const client = {
      responses: {
        create: async (request: { input: unknown }) => {
          inputs.push(request.input);
          const n = inputs.length;
          const output =
            n === 1
              ? [{ type: "function_call", id: "fc_1", call_id: "call_1", name: "lookup", arguments: "{}", status: "completed" }]
              : [
                  {
                    type: "message",
                    id: `msg_${n}`,
                    role: "assistant",
                    status: "completed",
                    content: [{ type: "output_text", text: `answer ${n}`, annotations: [] }],
                  },
                ];
          return { id: `resp_${n}`, output, usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } };
        },
      },
    };
    const lookup = tool({ name: "lookup", description: "Looks it up.", parameters: z.object({}), execute: async () => "42" });
    const agent = new Agent({ name: "a", instructions: "Answer.", model: new OpenAIResponsesModel(client as never, "m"), tools: [lookup] });
    await new Runner().run(agent, "what is it?", { session: memory });
    const result = (await s.history()).find((m) => m.role === "function_call_result")!;
    await s.edit(result.id, { content: "43" });

    const items = await memory.getItems();
    expect(items.at(-1)).toEqual({ type: "function_call_result", callId: "call_1", name: "lookup", status: "completed", output: "43" });
    expect(await memory.getItems(1)).toEqual([items.at(-1)]);
    const next = await new Runner().run(agent, "and then?", { session: memory });
    expect(next.finalOutput).toBe("answer 3");
    expect(JSON.stringify(inputs[2])).toContain('"output":"43"');
  });
  it("an edited tool result pops, and is a transaction's suffix, as getItems read it", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const memory = new ForkpointSession(s);
    await memory.addItems([
      { role: "user", content: "look both up" },
      { type: "function_call", callId: "call_a", name: "lookup", arguments: "{}", status: "completed" },
      { type: "function_call", callId: "call_b", name: "other", arguments: "{}", status: "completed" },
      { type: "function_call_result", callId: "call_a", name: "lookup", status: "completed", output: "1" },
      { type: "function_call_result", callId: "call_b", name: "other", status: "completed", output: "2" },
    ]);
    const result = (await s.history()).at(-1)!;
    await s.edit(result.id, { content: "3" });
    const edited = (await memory.getItems()).at(-1)!;
    expect(edited).toEqual({ type: "function_call_result", callId: "call_b", name: "other", status: "completed", output: "3" });
    expect(await memory.popItem()).toEqual(edited);

    await s.undo();
    await memory.getItems();
    await memory.applyHistoryTransaction({
      operationId: "op-1",
      transaction: { type: "replace_suffix", expectedSuffix: [edited], replacement: [{ role: "user", content: "never mind" }] },
    });
    expect((await memory.getItems()).at(-1)).toEqual({ role: "user", content: "never mind" });
  });
  it("an edited tool result answers no call left unanswered before the last input", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const memory = new ForkpointSession(s);
    await memory.addItems([
      { role: "user", content: "clean up" },
      { type: "function_call", callId: "call_x", name: "wipe_disk", arguments: "{}", status: "completed" },
    ]);
    // The approval the run stopped for is never given: the user asks something else.
    await memory.addItems([
      { role: "user", content: "what is it?" },
      { type: "function_call", callId: "call_y", name: "lookup", arguments: "{}", status: "completed" },
      { type: "function_call_result", callId: "call_y", name: "lookup", status: "completed", output: "42" },
    ]);
    await s.edit((await s.history()).at(-1)!.id, { content: "43" });
    expect((await memory.getItems()).at(-1)).toEqual({
      type: "function_call_result",
      callId: "call_y",
      name: "lookup",
      status: "completed",
      output: "43",
    });
  });
});
