// agentToolDefinitions: another server (handle) opened with the Agents tools' definitions undoes and replays their calls.
import { Agent, Runner, setTracingDisabled, tool } from "@openai/agents";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ValidationError } from "../../src/index.js";
import { ForkpointSession, agentToolDefinitions, undoableAgentTools } from "../../src/openai-agents/index.js";
import { openForkpoint } from "../fixtures/backend.js";
import { tempDatabases } from "../helpers.js";
import { ScriptedModel, functionCall, reply } from "./fake-model.js";

const dbs = tempDatabases();
beforeAll(() => setTracingDisabled(true));

/** A world of keys, the `put` tool writing to it, and its undo, each logged with the server that ran it. */
function world(log: string[]) {
  const keys = new Set<string>();
  const put = tool({
    name: "put",
    description: "Put a key",
    parameters: z.object({ k: z.string() }),
    execute: async ({ k }) => (keys.add(k), log.push(`put ${k}`), "ok"),
  });
  const undo =
    (server: string) =>
    ({ args }: { args: { k: string } }) =>
      void (keys.delete(args.k), log.push(`${server} undo ${args.k}`));
  return { keys, put, undo };
}

/** Server A runs an Agent that puts "x"; returns the session, the checkpoint before the run and the database path. */
async function ranOnServerA(log: string[]) {
  const w = world(log);
  const { fp, path } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  const cp = await s.checkpoint({ name: "start" });
  const model = new ScriptedModel([[functionCall("c1", "put", { k: "x" })], [reply("put x")]]);
  const agent = new Agent({ name: "a", model, tools: undoableAgentTools(s, [w.put], { put: w.undo("A") }) });
  await new Runner().run(agent, "put x", { session: new ForkpointSession(s) });
  return { ...w, s, cp, path, runBranch: (await s.info()).currentBranchId };
}

describe("agentToolDefinitions", () => {
  it("a rollback on another server opened with them undoes the call; a switch back replays it through the tool", async () => {
    const log: string[] = [];
    const { keys, put, undo, s, cp, path, runBranch } = await ranOnServerA(log);
    const serverB = dbs.track(openForkpoint({ path, tools: agentToolDefinitions([put], { put: undo("B") }) }));
    const onB = await serverB.getSession(s.id, { userId: "u" });
    expect((await onB.rollback(cp.id)).undone.map((t) => t.callId)).toEqual(["c1"]);
    expect([...keys]).toEqual([]);
    await onB.switchBranch(runBranch);
    expect([...keys]).toEqual(["x"]);
    expect(log).toEqual(["put x", "B undo x", "put x"]);
  });

  it("without them, the same rollback is refused TOOL_NOT_REGISTERED, nothing undone", async () => {
    const log: string[] = [];
    const { keys, s, cp, path } = await ranOnServerA(log);
    const serverB = dbs.track(openForkpoint({ path }));
    const refused = await (await serverB.getSession(s.id, { userId: "u" })).rollback(cp.id).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "TOOL_NOT_REGISTERED" });
    expect([...keys]).toEqual(["x"]);
  });

  it("checks its arguments as undoableAgentTools does", () => {
    const { put } = world([]);
    expect(() => agentToolDefinitions([put], { nope: () => undefined })).toThrow(ValidationError);
    expect(() => agentToolDefinitions({} as never)).toThrow(ValidationError);
    expect(agentToolDefinitions([put]).map((d) => [d.name, typeof d.undo])).toEqual([["put", "undefined"]]);
  });
});
