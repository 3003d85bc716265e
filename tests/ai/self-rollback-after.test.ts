// forkpoint/ai: tools wrapped per request with `after` (a route handler's) follow a rollback their own loop's model
// makes through aiCheckpointTools: the loop's later calls go on the rollback's branch, not after the question.
import { generateText, isStepCount, tool, type UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { aiCheckpointTools, saveChat, undoableTools } from "../../src/ai/index.js";
import type { SessionHandle } from "../../src/index.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedModel, text } from "./mock-model.js";

const dbs = tempDatabases();

const user = (id: string, t: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text: t }] });
const answer = (id: string, t: string): UIMessage => ({ id, role: "assistant", parts: [{ type: "text", text: t }] });

/** One request as the route handler has it: the question saved, the tools wrapped `{ after }` it, the loop run. */
async function request(s: SessionHandle, messages: UIMessage[], steps: Parameters<typeof scriptedModel>[0], world: Set<string>) {
  const asked = await saveChat(s, messages);
  const put = tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), k) });
  const tools = {
    ...undoableTools(s, { put }, { put: ({ args }) => void world.delete(args.k) }, { after: asked.lastMessageId }),
    ...aiCheckpointTools(s),
  };
  return generateText({ model: scriptedModel(steps), tools, prompt: "go", stopWhen: isStepCount(5) });
}

describe("a model's own rollback with tools wrapped { after } the question", () => {
  it("the loop's later calls land on the rollback's branch, the earlier ones undone", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const world = new Set<string>();
    const start = [user("q0", "first"), answer("a0", "ok")];
    await saveChat(s, start);
    const cp = await s.checkpoint({ name: "start" });
    await request(s, [...start, user("q1", "put x")], [[call("c1", "put", { k: "x" })], [text("put x")]], world);
    await saveChat(s, [...start, user("q1", "put x"), answer("a1", "put x")]);
    const before = (await s.info()).currentBranchId;
    const ran = await request(
      s,
      [...start, user("q1", "put x"), answer("a1", "put x"), user("q2", "undo that and put y")],
      [[call("c2", "rollback", { checkpointId: cp.id })], [call("c3", "put", { k: "y" })], [text("done")]],
      world,
    );
    expect(ran.steps[1]!.toolResults[0]!.output).toBe("y");
    expect([...world]).toEqual(["y"]);
    const track = (branchId?: string) => s.toolTrack(branchId ? { branchId } : {}).then((t) => t.map((c) => [c.callId, c.applied]));
    expect(await track()).toEqual([["c3", true]]);
    expect(await track(before)).toEqual([["c1", false]]);
  });
});
