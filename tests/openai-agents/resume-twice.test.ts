// One approval resumed twice (a double-clicked "approve", two app servers, a request sent again): the tool runs once.
import { Agent, RunState, Runner, setTracingDisabled, tool, type AgentInputItem } from "@openai/agents";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Forkpoint, SessionHandle } from "../../src/index.js";
import { ForkpointSession, undoableAgentTools } from "../../src/openai-agents/index.js";
import { tempDatabases } from "../helpers.js";
import { ScriptedModel, functionCall, reply } from "./fake-model.js";
import { codeOf, kinds } from "./item-kinds.js";

const dbs = tempDatabases();
beforeAll(() => setTracingDisabled(true));

/** A memory whose first write fails, as a server that died once the tool ran and before the run was saved. */
class DiesBeforeSaving extends ForkpointSession {
  override async addItems(): Promise<void> {
    throw new Error("server died");
  }
}

/** Request 1: the run asks to `deploy` (approval needed) and stops; its state is saved as a server would. */
async function stoppedForApproval() {
  const { fp, path } = dbs.open();
  const other = dbs.open({ path }).fp;
  const s = await fp.createSession({ userId: "u" });
  const start = await s.checkpoint({ name: "start" });
  const counts = { runs: 0, undos: 0 };
  // A latch in the tool: once held, the next run of deploy waits inside the tool until released.
  let held: { entered: () => void; released: Promise<void> } | null = null;
  const hold = () => {
    let entered!: () => void;
    let release!: () => void;
    const running = new Promise<void>((resolve) => (entered = resolve));
    held = { entered, released: new Promise<void>((resolve) => (release = resolve)) };
    return { running, release };
  };
  const deploy = tool({
    name: "deploy",
    description: "deploy",
    parameters: z.object({ env: z.string() }),
    needsApproval: true,
    execute: async ({ env }) => {
      counts.runs++;
      const latch = held;
      held = null;
      if (latch) {
        latch.entered();
        await latch.released;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
      return `deployed ${env}`;
    },
  });
  const agent = (session: SessionHandle, turns: Parameters<typeof reply>[0][]) =>
    new Agent({
      name: "a",
      instructions: "x",
      model: new ScriptedModel(turns.map((text) => [reply(text)])),
      tools: undoableAgentTools(session, [deploy], { deploy: () => void counts.undos++ }),
    });
  const first = await new Runner().run(
    new Agent({
      name: "a",
      instructions: "x",
      model: new ScriptedModel([[functionCall("call_1", "deploy", { env: "prod" })]]),
      tools: undoableAgentTools(s, [deploy], { deploy: () => void counts.undos++ }),
    }),
    "deploy prod",
    { session: new ForkpointSession(s) },
  );
  expect(first.interruptions).toHaveLength(1);
  const saved = first.state.toString();
  /** POST /approve (or /reject) on server `on`: a new Agent and memory, the saved state approved and resumed. */
  const resume = async (on: Forkpoint, memory: typeof ForkpointSession, how: "approve" | "reject") => {
    const again = await on.getSession(s.id, { userId: "u" });
    const resumed = agent(again, [how === "approve" ? "deployed" : "not deployed"]);
    const state = await RunState.fromString(resumed, saved);
    for (const i of state.getInterruptions()) how === "approve" ? state.approve(i) : state.reject(i);
    return new Runner().run(resumed, state, { session: new memory(again) }).then(
      (r) => r.finalOutput,
      (e: unknown) => ({ code: codeOf(e), message: String((e as Error).message) }),
    );
  };
  const approve = (on: Forkpoint, memory: typeof ForkpointSession = ForkpointSession) => resume(on, memory, "approve");
  const reject = (on: Forkpoint) => resume(on, ForkpointSession, "reject");
  const track = async () => (await s.toolTrack()).map((t) => `${t.callId}/${t.status}`);
  const items = async () => kinds(await new ForkpointSession(s).getItems());
  return { fp, other, s, start, counts, hold, approve, reject, track, items };
}

describe("an approval resumed twice", () => {
  for (const servers of ["one server", "two servers"] as const) {
    it(`at once (${servers}): the tool runs once, one call journaled, the other resume refused truthfully`, async () => {
      const { fp, other, s, start, counts, approve, track, items } = await stoppedForApproval();
      const results = await Promise.all([approve(fp), approve(servers === "one server" ? fp : other)]);
      expect(counts.runs).toBe(1);
      expect(await track()).toEqual(["call_1/succeeded"]);
      expect(results).toContain("deployed");
      const refused = results.find((r) => r !== "deployed") as { code: string; message: string };
      expect(refused.code).toBe("CALL_ANSWERED");
      expect(refused.message).not.toMatch(/nothing was run|another branch/);
      expect(await items()).toEqual(["user", "function_call", "function_call_result", "assistant"]);
      expect((await s.rollback(start.id)).undone).toHaveLength(1);
      expect(counts.undos).toBe(1);
    });
  }

  it("again once answered (the session never moved): refused CALL_ANSWERED, the tool not run, nothing written", async () => {
    const { fp, other, counts, approve, track, items } = await stoppedForApproval();
    expect(await approve(fp)).toBe("deployed");
    for (const on of [fp, other]) {
      const again = (await approve(on)) as { code: string; message: string };
      expect(again.code).toBe("CALL_ANSWERED");
      expect(again.message).not.toMatch(/another branch|moved away/);
    }
    expect(counts.runs).toBe(1);
    expect(await track()).toEqual(["call_1/succeeded"]);
    expect(await items()).toEqual(["user", "function_call", "function_call_result", "assistant"]);
  });

  it("again after a server died before saving the run: the recorded result, the tool not run again", async () => {
    const { fp, other, s, counts, approve, track, items } = await stoppedForApproval();
    expect(await approve(fp, DiesBeforeSaving)).toMatchObject({ message: "server died" });
    expect(counts.runs).toBe(1);
    expect(await approve(other)).toBe("deployed");
    expect(counts.runs).toBe(1);
    expect(await track()).toEqual(["call_1/succeeded"]);
    expect(await items()).toEqual(["user", "function_call", "function_call_result", "assistant"]);
    const result = (await new ForkpointSession(s).getItems())[2] as AgentInputItem & { output: unknown };
    expect(JSON.stringify(result.output)).toContain("deployed prod");
  });

  it("again after a rollback undid the call it ran (its function_call kept): the tool runs again", async () => {
    const { fp, other, s, counts, approve, track, items } = await stoppedForApproval();
    const asked = await s.checkpoint({ name: "asked" });
    expect(await approve(fp, DiesBeforeSaving)).toMatchObject({ message: "server died" });
    expect((await s.rollback(asked.id)).undone).toHaveLength(1);
    expect(counts).toEqual({ runs: 1, undos: 1 });
    expect(await approve(other)).toBe("deployed");
    expect(counts).toEqual({ runs: 2, undos: 1 });
    expect(await track()).toEqual(["call_1/succeeded"]);
    expect(await items()).toEqual(["user", "function_call", "function_call_result", "assistant"]);
  });

  for (const servers of ["one server", "two servers"] as const) {
    it(`approved and rejected at once (${servers}): the rejection is refused while the call runs`, async () => {
      const { fp, other, s, counts, hold, approve, reject, track, items } = await stoppedForApproval();
      const latch = hold();
      const approving = approve(fp);
      await latch.running;
      const rejected = (await reject(servers === "one server" ? fp : other)) as { code: string; message: string };
      expect(rejected.code).toBe("CALL_ANSWERED");
      expect(await items()).toEqual(["user", "function_call"]);
      latch.release();
      expect(await approving).toBe("deployed");
      expect(counts.runs).toBe(1);
      expect(await track()).toEqual(["call_1/succeeded"]);
      expect(await items()).toEqual(["user", "function_call", "function_call_result", "assistant"]);
      const result = (await new ForkpointSession(s).getItems())[2] as AgentInputItem & { output: unknown };
      expect(JSON.stringify(result.output)).toContain("deployed prod");
    });
  }

  it("rejected once the approved call ran (its run not saved): refused CALL_ANSWERED, an approval resumes it", async () => {
    const { fp, other, counts, approve, reject, track, items } = await stoppedForApproval();
    expect(await approve(fp, DiesBeforeSaving)).toMatchObject({ message: "server died" });
    expect(((await reject(other)) as { code: string }).code).toBe("CALL_ANSWERED");
    expect(await items()).toEqual(["user", "function_call"]);
    expect(await approve(other)).toBe("deployed");
    expect(counts.runs).toBe(1);
    expect(await track()).toEqual(["call_1/succeeded"]);
    expect(await items()).toEqual(["user", "function_call", "function_call_result", "assistant"]);
  });
});
