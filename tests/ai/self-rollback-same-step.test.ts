// forkpoint/ai: a model's own rollback with other tool calls in the same step keeps the model's order among them.
import { generateText, isStepCount, streamText, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { aiCheckpointTools, undoableTools } from "../../src/ai/index.js";
import type { SessionHandle } from "../../src/index.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedModel, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

/** A session with a checkpoint after its first message, and the tools of one loop on it (a slow `put`). */
async function setup() {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  await s.append({ role: "user", content: "q" });
  const cp = await s.checkpoint({ name: "cp" });
  const world = new Set<string>();
  const put = tool({
    inputSchema: z.object({ k: z.string() }),
    execute: async ({ k }) => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      world.add(k);
      return k;
    },
  });
  const stop = new AbortController();
  const tools = {
    ...undoableTools(s, { put }, { put: ({ args }) => void world.delete(args.k) }, { abortController: stop }),
    ...aiCheckpointTools(s),
  };
  return { s, cp, world, tools, stop };
}

const track = (s: SessionHandle, branchId?: string) =>
  s.toolTrack(branchId ? { branchId } : {}).then((t) => t.map((c) => [c.callId, c.applied]));

/** Step 2 puts b1, rolls back to the checkpoint, puts b2; step 3 puts c. */
const script = (checkpointId: string) => [
  [call("c1", "put", { k: "a" })],
  [call("c2", "put", { k: "b1" }), call("r1", "rollback", { checkpointId }), call("c3", "put", { k: "b2" })],
  [call("c4", "put", { k: "c" })],
  [text("done")],
];

describe("a model's own rollback beside other calls of its step", () => {
  it("runs the calls listed before it first (it undoes them) and those after it on its branch; the loop goes on", async () => {
    const { s, cp, world, tools, stop } = await setup();
    const left = (await s.info()).currentBranchId;
    const result = await generateText({
      model: scriptedModel(script(cp.id)),
      tools,
      prompt: "go",
      stopWhen: isStepCount(6),
      abortSignal: stop.signal,
    });
    expect(result.text).toBe("done");
    const outputs = result.steps[1]!.content.filter((c) => c.type === "tool-result").map((c) => [c.toolCallId, c.output]);
    expect(outputs).toEqual([
      ["c2", "b1"],
      ["r1", expect.objectContaining({ ok: true })],
      ["c3", "b2"],
    ]);
    const undone = (outputs[1]![1] as { undone: { id: string }[] }).undone.map((u) => u.id);
    expect(undone.sort()).toEqual((await s.toolTrack({ branchId: left })).map((c) => c.id).sort());
    expect([...world].sort()).toEqual(["b2", "c"]);
    expect(await track(s, left)).toEqual([
      ["c1", false],
      ["c2", false],
    ]);
    expect(await track(s)).toEqual([
      ["c3", true],
      ["c4", true],
    ]);
    expect(stop.signal.aborted).toBe(false);
  });

  it("keeps the same order when the calls stream in (streamText)", async () => {
    const { s, cp, world, tools, stop } = await setup();
    const result = streamText({
      model: scriptedStreamModel(script(cp.id)),
      tools,
      prompt: "go",
      stopWhen: isStepCount(6),
      abortSignal: stop.signal,
    });
    expect(await result.text).toBe("done");
    expect([...world].sort()).toEqual(["b2", "c"]);
    expect(await track(s)).toEqual([
      ["c3", true],
      ["c4", true],
    ]);
  });

  it("runs a streaming call listed before it first too, and undoes it", async () => {
    const { s, cp, world, tools: own, stop } = await setup();
    const stream = tool({
      inputSchema: z.object({ k: z.string() }),
      async *execute({ k }) {
        yield "starting";
        await new Promise((resolve) => setTimeout(resolve, 10));
        world.add(k);
        yield k;
      },
    });
    const tools = {
      ...own,
      ...undoableTools(s, { stream }, { stream: ({ args }) => void world.delete(args.k) }, { abortController: stop }),
    };
    const steps = [
      [call("c1", "stream", { k: "s" }), call("r1", "rollback", { checkpointId: cp.id }), call("c2", "put", { k: "p" })],
      [text("done")],
    ];
    const result = await generateText({
      model: scriptedModel(steps),
      tools,
      prompt: "go",
      stopWhen: isStepCount(4),
      abortSignal: stop.signal,
    });
    expect(result.text).toBe("done");
    expect([...world]).toEqual(["p"]);
    expect(await track(s)).toEqual([["c2", true]]);
  });

  it("lets the calls after a rollback that failed go on on the branch the loop is on", async () => {
    const { s, world, tools, stop } = await setup();
    const result = await generateText({
      model: scriptedModel(script("cp_missing")),
      tools,
      prompt: "go",
      stopWhen: isStepCount(6),
      abortSignal: stop.signal,
    });
    expect(result.text).toBe("done");
    expect(result.steps[1]!.toolResults.find((r) => r.toolCallId === "r1")!.output).toMatchObject({ ok: false });
    expect([...world].sort()).toEqual(["a", "b1", "b2", "c"]);
    expect(await track(s)).toEqual([
      ["c1", true],
      ["c2", true],
      ["c3", true],
      ["c4", true],
    ]);
  });
});
