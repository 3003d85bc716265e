// A resumed run's approved call under an id an earlier turn's call reused (`call_0` every response): told by its tool,
// arguments and whether the lineage answered it, so an earlier turn's call does not pass for the one edited away.
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

/** Turn 1 runs `put a` as call_0; turn 2 asks `put b` as call_0 too (approval needed) and stops, its state saved. */
async function secondTurnStopped(wrapped = true) {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  const world = new Set<string>();
  const put = tool({
    name: "put",
    description: "put",
    parameters: z.object({ k: z.string() }),
    needsApproval: async (_ctx, { k }) => k !== "a",
    execute: async ({ k }) => (world.add(k), "ok"),
  });
  const model = new ScriptedModel([
    [functionCall("call_0", "put", { k: "a" })],
    [reply("did a")],
    [functionCall("call_0", "put", { k: "b" })],
    [reply("did b")],
  ]);
  const agent = (session: SessionHandle) =>
    new Agent({
      name: "a",
      instructions: "x",
      model,
      tools: wrapped ? undoableAgentTools(session, [put], { put: ({ args }) => void world.delete(args.k) }) : [put],
    });
  await new Runner().run(agent(s), "put a", { session: new ForkpointSession(s) });
  const stopped = await new Runner().run(agent(s), "put b", { session: new ForkpointSession(s) });
  expect(stopped.interruptions).toHaveLength(1);
  const saved = stopped.state.toString();
  const resume = async () => {
    const again = await fp.getSession(s.id, { userId: "u" });
    const resumed = agent(again);
    const state = await RunState.fromString(resumed, saved);
    for (const i of state.getInterruptions()) state.approve(i);
    return new Runner().run(resumed, state, { session: new ForkpointSession(again) }).then(
      (r) => r.finalOutput,
      (e: unknown) => codeOf(e) ?? e,
    );
  };
  const editSecondInput = async () => {
    const input = (await s.history()).filter((m) => m.role === "user").at(-1)!;
    await s.edit(input.id, { content: "never mind b" });
  };
  return { s, world, resume, editSecondInput };
}

const turnOne = ["user", "function_call", "function_call_result", "assistant"];

describe("a resumed run whose approved call reuses an earlier turn's call id", () => {
  it("goes on when the session did not move", async () => {
    const { s, world, resume } = await secondTurnStopped();
    expect(await resume()).toBe("did b");
    expect([...world]).toEqual(["a", "b"]);
    expect(kinds(await new ForkpointSession(s).getItems())).toEqual([...turnOne, ...turnOne]);
  });

  it("its input edited meanwhile: refused (SESSION_MOVED), the tool not run, nothing written", async () => {
    const { s, world, resume, editSecondInput } = await secondTurnStopped();
    await editSecondInput();
    const before = (await s.history()).map((m) => m.id);
    expect(await resume()).toBe("SESSION_MOVED");
    expect([...world]).toEqual(["a"]);
    expect((await s.toolTrack()).map((t) => t.args)).toEqual([{ k: "a" }]);
    expect((await s.history()).map((m) => m.id)).toEqual(before);
  });

  it("an unwrapped tool's result for it is refused on the edited branch (the earlier call_0 is answered)", async () => {
    const { s, editSecondInput } = await secondTurnStopped(false);
    const result = {
      type: "function_call_result",
      name: "put",
      callId: "call_0",
      status: "completed",
      output: { type: "text", text: "ok" },
    };
    const runBranch = (await s.info()).currentBranchId;
    await editSecondInput();
    const before = (await s.history()).map((m) => m.id);
    const error = await new ForkpointSession(s).addItems([result as AgentInputItem]).catch((e: unknown) => e);
    expect(codeOf(error)).toBe("SESSION_MOVED");
    expect((await s.history()).map((m) => m.id)).toEqual(before);
    await s.switchBranch(runBranch);
    await new ForkpointSession(s).addItems([result as AgentInputItem]);
    expect(kinds(await new ForkpointSession(s).getItems())).toEqual([...turnOne, "user", "function_call", "function_call_result"]);
  });
});
