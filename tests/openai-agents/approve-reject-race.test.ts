// An approval and a rejection of one call resumed at once (issue 32): whichever lands second is refused, and the
// conversation never says "not approved" of a call whose tool ran.
import { Agent, RunState, Runner, setTracingDisabled, tool, type AgentInputItem } from "@openai/agents";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Forkpoint, SessionHandle } from "../../src/index.js";
import { ForkpointSession, undoableAgentTools } from "../../src/openai-agents/index.js";
import { aroundWrites } from "../fixtures/around-writes.js";
import { tempDatabases } from "../helpers.js";
import { ScriptedModel, functionCall, reply } from "./fake-model.js";
import { codeOf, kinds } from "./item-kinds.js";

const dbs = tempDatabases();
beforeAll(() => setTracingDisabled(true));

type Outcome = string | { code: string | undefined; message: string };

/** Request 1 stops for the approval of `deploy`; `resume` is POST /approve or /reject on a server, from the saved state. */
async function stoppedForApproval() {
  const { fp, path } = dbs.open();
  const other = dbs.open({ path }).fp;
  const s = await fp.createSession({ userId: "u" });
  let runs = 0;
  const deploy = tool({
    name: "deploy",
    description: "deploy",
    parameters: z.object({ env: z.string() }),
    needsApproval: true,
    execute: async ({ env }) => {
      runs++;
      return `deployed ${env}`;
    },
  });
  const agent = (session: SessionHandle, turns: string[]) =>
    new Agent({
      name: "a",
      instructions: "x",
      model: new ScriptedModel(turns.map((text) => [reply(text)])),
      tools: undoableAgentTools(session, [deploy], { deploy: () => undefined }),
    });
  const first = await new Runner().run(
    new Agent({
      name: "a",
      instructions: "x",
      model: new ScriptedModel([[functionCall("call_1", "deploy", { env: "prod" })]]),
      tools: undoableAgentTools(s, [deploy], { deploy: () => undefined }),
    }),
    "deploy prod",
    { session: new ForkpointSession(s) },
  );
  expect(first.interruptions).toHaveLength(1);
  const saved = first.state.toString();
  /** The resume on server `on`; `calling` is told once its run is about to call a tool. */
  const resume = async (on: Forkpoint, how: "approve" | "reject", calling?: () => void): Promise<Outcome> => {
    const again = await on.getSession(s.id, { userId: "u" });
    const resumed = agent(again, [how === "approve" ? "deployed" : "not deployed"]);
    const state = await RunState.fromString(resumed, saved);
    for (const i of state.getInterruptions()) how === "approve" ? state.approve(i) : state.reject(i);
    const runner = new Runner();
    if (calling) runner.on("agent_tool_start", calling);
    return runner.run(resumed, state, { session: new ForkpointSession(again) }).then(
      (r) => String(r.finalOutput),
      (e: unknown) => ({ code: codeOf(e), message: String((e as Error).message) }),
    );
  };
  const track = async () => (await s.toolTrack()).map((t) => `${t.callId}/${t.status}`);
  const items = async () => (await new ForkpointSession(s).getItems()) as (AgentInputItem & { output?: unknown })[];
  return { fp, other, s, runs: () => runs, resume, track, items };
}

/**
 * Runs the rejection just before (or after) the approving resume's first write once its run calls the tool:
 * the call's journal. The rejection's own writes, on the same server, pass.
 */
function rejectAround(fp: Forkpoint, when: "before" | "after", reject: () => Promise<Outcome>) {
  const at = { calling: false, rejecting: false, rejected: undefined as Outcome | undefined };
  aroundWrites(fp, when, async () => {
    if (!at.calling || at.rejecting) return false;
    at.rejecting = true;
    at.rejected = await reject();
    return true;
  });
  return at;
}

describe.each(["one server", "two servers"] as const)("an approval and a rejection of one call at once (%s)", (servers) => {
  it("the rejection saved after the approved call's check, before its journal: the call is refused, the tool never runs", async () => {
    const { fp, other, runs, resume, track, items } = await stoppedForApproval();
    // The approving resume has checked that the call is unanswered; its next write is the call's journal. The
    // rejection lands right here.
    const at = rejectAround(fp, "before", () => resume(servers === "one server" ? fp : other, "reject"));
    const approved = await resume(fp, "approve", () => (at.calling = true));
    expect(at.rejected).toBe("not deployed");
    expect(approved).toMatchObject({ code: "CALL_ANSWERED" });
    expect(runs()).toBe(0);
    expect(await track()).toEqual([]);
    const saved = await items();
    expect(kinds(saved)).toEqual(["user", "function_call", "function_call_result", "assistant"]);
    expect(JSON.stringify(saved[2]!.output)).toContain("not approved");
  });

  it("the rejection saved once the approved call is journaled: the rejection is refused, the tool runs once", async () => {
    const { fp, other, runs, resume, track, items } = await stoppedForApproval();
    // The call's journal has committed, its tool not yet run: the rejection lands right here.
    const at = rejectAround(fp, "after", () => resume(servers === "one server" ? fp : other, "reject"));
    const approved = await resume(fp, "approve", () => (at.calling = true));
    expect(at.rejected).toMatchObject({ code: "CALL_ANSWERED" });
    expect(approved).toBe("deployed");
    expect(runs()).toBe(1);
    expect(await track()).toEqual(["call_1/succeeded"]);
    const saved = await items();
    expect(kinds(saved)).toEqual(["user", "function_call", "function_call_result", "assistant"]);
    expect(JSON.stringify(saved[2]!.output)).toContain("deployed prod");
  });
});
