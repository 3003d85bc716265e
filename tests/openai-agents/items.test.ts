// ForkpointSession keeps every kind of Agents SDK item exactly as added, and reads the last `limit` in order.
import type { AgentInputItem } from "@openai/agents";
import { describe, expect, it } from "vitest";
import { ForkpointSession } from "../../src/openai-agents/index.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** One item of each kind a run produces or an app adds, with content arrays, provider data and odd values. */
const items: AgentInputItem[] = [
  { role: "system", content: "Be brief." },
  {
    role: "user",
    content: [
      { type: "input_text", text: "what is this?" },
      { type: "input_image", image: "data:image/png;base64,iVBORw0KGgo=", detail: "auto" },
      { type: "input_file", file: { id: "file_1" } },
    ],
  },
  {
    type: "reasoning",
    id: "rs_1",
    content: [{ type: "input_text", text: "thinking" }],
    rawContent: [{ type: "reasoning_text", text: "raw" }],
    providerData: { encrypted: "x" },
  },
  { type: "function_call", callId: "c1", name: "f", arguments: '{"a":[1,{"$fp":"not a tag"}]}', status: "completed", id: "fc_1" },
  {
    type: "function_call_result",
    callId: "c1",
    name: "f",
    status: "completed",
    output: [
      { type: "input_text", text: "ok" },
      { type: "input_image", image: "https://x.test/i.png" },
    ],
  },
  { type: "function_call_result", callId: "c2", name: "f", status: "incomplete", output: "plain" },
  {
    type: "hosted_tool_call",
    name: "web_search_call",
    status: "completed",
    arguments: '{"q":"x"}',
    output: "found",
    providerData: { action: { type: "search" } },
  },
  { type: "computer_call", callId: "cc1", status: "completed", action: { type: "click", x: 1, y: 2, button: "left" } },
  { type: "computer_call_result", callId: "cc1", output: { type: "computer_screenshot", data: "aGk=" } },
  { type: "shell_call", callId: "sh1", status: "completed", action: { commands: ["ls"], timeoutMs: 100 } },
  { type: "shell_call_output", callId: "sh1", output: [{ stdout: "a\n", stderr: "", outcome: { type: "exit", exitCode: 0 } }] },
  { type: "apply_patch_call", callId: "ap1", status: "completed", operation: { type: "create_file", path: "a.txt", diff: "+a" } },
  { type: "apply_patch_call_output", callId: "ap1", status: "completed", output: "done" },
  {
    type: "message",
    role: "assistant",
    status: "completed",
    id: "msg_1",
    content: [
      { type: "output_text", text: "It is a PNG." },
      { type: "refusal", refusal: "no" },
    ],
  },
  { type: "unknown", providerData: { nested: { deep: [null, true, 0, -1.5, "", "\u{1F600}"] } } },
];

describe("ForkpointSession items", () => {
  it("returns every kind of item deep-equal to what was added, across several addItems calls", async () => {
    const { fp } = dbs.open();
    const memory = new ForkpointSession(await fp.createSession({ userId: "u" }));
    await memory.addItems(items.slice(0, 5));
    await memory.addItems(items.slice(5));
    expect(await memory.getItems()).toStrictEqual(items);
    // A fresh ForkpointSession on the same session reads the same.
    const again = new ForkpointSession(await fp.getSession(await memory.getSessionId(), { userId: "u" }));
    expect(await again.getItems()).toStrictEqual(items);
  });

  it("getItems(limit) is the last `limit` items in chronological order; more than there are is all of them", async () => {
    const { fp } = dbs.open();
    const memory = new ForkpointSession(await fp.createSession({ userId: "u" }));
    await memory.addItems(items);
    expect(await memory.getItems(3)).toStrictEqual(items.slice(-3));
    expect(await memory.getItems(1)).toStrictEqual(items.slice(-1));
    expect(await memory.getItems(items.length + 10)).toStrictEqual(items);
    // After a pop, the window moves with the branch.
    await memory.popItem();
    expect(await memory.getItems(2)).toStrictEqual(items.slice(-3, -1));
  });

  it("clearSession then getItems is empty; popItem on an empty session is undefined and forks nothing", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const memory = new ForkpointSession(s);
    expect(await memory.popItem()).toBeUndefined();
    await memory.clearSession();
    expect(await s.branches()).toHaveLength(1);
    await memory.addItems(items.slice(0, 2));
    await memory.clearSession();
    expect(await memory.getItems()).toEqual([]);
    expect(await memory.popItem()).toBeUndefined();
    const branches = await s.branches();
    expect(branches).toHaveLength(2);
    const old = branches.find((b) => !b.current)!;
    expect((await s.history({ branchId: old.id })).map((m) => m.role)).toEqual(["system", "user"]);
  });
});
