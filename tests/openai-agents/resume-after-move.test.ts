// A run stopped for a tool approval and resumed in a new request (a new Agent, ForkpointSession and RunState): when
// another tab moved the session away from the saved call meanwhile, the call is not run and its result not written.
import { Agent, RunState, Runner, setTracingDisabled, tool, type AgentInputItem } from "@openai/agents";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { SessionHandle } from "../../src/index.js";
import { ForkpointSession, undoableAgentTools } from "../../src/openai-agents/index.js";
import { tempDatabases } from "../helpers.js";
import { ScriptedModel, functionCall, reply } from "./fake-model.js";
import { codeOf, kinds } from "./item-kinds.js";

const dbs = tempDatabases();
beforeAll(() => setTracingDisabled(true));

/** Request 1: the run asks to `put` (approval needed) and stops; its state is saved as a server would. */
async function stoppedForApproval(wrapped = true) {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  const world = new Set<string>();
  const put = tool({
    name: "put",
    description: "put",
    parameters: z.object({ k: z.string() }),
    needsApproval: true,
    execute: async ({ k }) => (world.add(k), "ok"),
  });
  const model = new ScriptedModel([[functionCall("c1", "put", { k: "x" })], [reply("did x")]]);
  const agent = (session: SessionHandle) =>
    new Agent({
      name: "a",
      instructions: "x",
      model,
      tools: wrapped ? undoableAgentTools(session, [put], { put: ({ args }) => void world.delete(args.k) }) : [put],
    });
  const first = await new Runner().run(agent(s), "put x", { session: new ForkpointSession(s) });
  expect(first.interruptions).toHaveLength(1);
  const saved = first.state.toString();
  /** Request 2: a new Agent and ForkpointSession, the state approved (or rejected) and the run resumed. */
  const resume = async (answer: "approve" | "reject" = "approve") => {
    const again = await fp.getSession(s.id, { userId: "u" });
    const resumed = agent(again);
    const state = await RunState.fromString(resumed, saved);
    for (const i of state.getInterruptions()) state[answer](i);
    return new Runner().run(resumed, state, { session: new ForkpointSession(again) }).then(
      (r) => r.finalOutput,
      (e: unknown) => codeOf(e) ?? e,
    );
  };
  const editInput = async () => {
    const input = (await s.history()).find((m) => m.role === "user")!;
    await s.edit(input.id, { content: "never mind" });
  };
  return { s, world, resume, editInput };
}

describe("a run resumed after an approval in a new request", () => {
  it("goes on where its call was saved when the session did not move", async () => {
    const { s, world, resume } = await stoppedForApproval();
    expect(await resume()).toBe("did x");
    expect([...world]).toEqual(["x"]);
    expect(kinds(await new ForkpointSession(s).getItems())).toEqual(["user", "function_call", "function_call_result", "assistant"]);
  });

  it("another tab edited the input meanwhile: refused (SESSION_MOVED), the tool not run, nothing written", async () => {
    const { s, world, resume, editInput } = await stoppedForApproval();
    await editInput();
    expect(await resume()).toBe("SESSION_MOVED");
    expect([...world]).toEqual([]);
    expect(await s.toolTrack()).toEqual([]);
    expect((await s.history()).map((m) => [m.role, m.content])).toEqual([["user", "never mind"]]);
  });

  it("switched back to the run's branch after the edit, the resumed run goes on there", async () => {
    const { s, world, resume, editInput } = await stoppedForApproval();
    const runBranch = (await s.info()).currentBranchId;
    await editInput();
    await s.switchBranch(runBranch);
    expect(await resume()).toBe("did x");
    expect([...world]).toEqual(["x"]);
    expect(kinds(await new ForkpointSession(s).getItems())).toEqual(["user", "function_call", "function_call_result", "assistant"]);
  });

  it("a rejected call's result is not written into the edited conversation either", async () => {
    const { s, world, resume, editInput } = await stoppedForApproval();
    await editInput();
    expect(await resume("reject")).toBe("SESSION_MOVED");
    expect([...world]).toEqual([]);
    expect((await s.history()).map((m) => [m.role, m.content])).toEqual([["user", "never mind"]]);
  });

  it("a result whose call only another branch holds is refused (addItems, append_items); on its branch it is written", async () => {
    const { s, editInput } = await stoppedForApproval(false);
    const result = { type: "function_call_result", name: "put", callId: "c1", status: "completed", output: { type: "text", text: "ok" } };
    const onLineage = await s.info();
    await editInput();
    const error = await new ForkpointSession(s).addItems([result as AgentInputItem]).catch((e: unknown) => e);
    expect(codeOf(error)).toBe("SESSION_MOVED");
    expect((await s.history()).map((m) => m.role)).toEqual(["user"]);
    const transaction = { type: "append_items" as const, items: [result as AgentInputItem] };
    const applied = new ForkpointSession(s).applyHistoryTransaction({ operationId: "op-1", transaction });
    expect(codeOf(await applied.catch((e: unknown) => e))).toBe("SESSION_MOVED");
    expect((await s.history()).map((m) => m.role)).toEqual(["user"]);
    await s.switchBranch(onLineage.currentBranchId);
    await new ForkpointSession(s).addItems([result as AgentInputItem]);
    expect(kinds(await new ForkpointSession(s).getItems())).toEqual(["user", "function_call", "function_call_result"]);
  });
});
