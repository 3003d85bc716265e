// docs/ai-sdk.md's route answering one question twice (a double submit, an approval or a client tool's output POSTed again), the models going on otherwise: each loop's calls land with its own answer.
import { convertToModelMessages, isStepCount, streamText, type UIMessage } from "ai";
import { expect, it } from "vitest";
import type { SessionHandle } from "../../src/index.js";
import { loadChat, saveChat, undoableTools } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { guideRoute as route, user, worldTools } from "./guide-route.js";
import { call, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** For each branch: the calls its chat shows done, the calls its track holds applied once switched to, and the world then. */
async function eachBranch(s: SessionHandle, world: Set<string>) {
  const out: { shown: string[]; applied: string[]; world: string[] }[] = [];
  for (const b of await s.branches()) {
    await s.switchBranch(b.id);
    const chat = await loadChat(s);
    const shown = chat.flatMap((m) =>
      m.parts.flatMap((p) => ("toolCallId" in p && p.state === "output-available" && p.type !== "tool-ask" ? [p.toolCallId] : [])),
    );
    const applied = (await s.toolTrack()).filter((t) => t.applied).map((t) => t.callId!);
    out.push({ shown: shown.sort(), applied: applied.sort(), world: [...world].sort() });
  }
  return out;
}

/** What each branch shows, holds and puts in the world agrees; the answers are `count` versions, one per branch. */
async function expectConsistent(s: SessionHandle, world: Set<string>, answers: string[][]) {
  const seen = await eachBranch(s, world);
  for (const b of seen) {
    expect(b.applied).toEqual(b.shown);
    expect(b.world).toEqual(b.shown);
  }
  expect(seen.map((b) => b.shown.join(",")).sort()).toEqual(answers.map((a) => [...a].sort().join(",")).sort());
}

for (const steps of [false, true]) {
  const saves = steps ? "saved after each step" : "saved at the end";
  it(`a question POSTed twice at once, the models calling other tools: each answer's branch holds its own calls (${saves})`, async () => {
    const { fp } = dbs.open();
    const world = new Set<string>();
    const s = await fp.createSession({ userId: "u" });
    const q = user("q", "put them");
    const body = JSON.stringify([q]);
    const model = (p: string, wait: number) =>
      scriptedStreamModel([[call(p, "put", { k: p })], [call(`${p}b`, "put", { k: `${p}b` })], [text(`${p} done`)]], () => pause(wait));
    await Promise.all([
      route(s, world, JSON.parse(body) as UIMessage[], model("p1", 10), steps),
      route(s, world, JSON.parse(body) as UIMessage[], model("p2", 15), steps),
    ]);
    await expectConsistent(s, world, [
      ["p1", "p1b"],
      ["p2", "p2b"],
    ]);
  });

  it(`a tool approval POSTed again after the first request ended, the model going on otherwise: the retry's calls land with its answer (${saves})`, async () => {
    const { fp } = dbs.open();
    const world = new Set<string>();
    const s = await fp.createSession({ userId: "u" });
    const q = user("q", "send it");
    await route(s, world, [q], scriptedStreamModel([[call("g1", "send", { k: "g1" })]]), steps);
    const [asked, answer] = await loadChat(s);
    const approved = {
      ...answer!,
      parts: answer!.parts.map((p) =>
        p.type === "tool-send" && p.state === "approval-requested"
          ? { ...p, state: "approval-responded" as const, approval: { ...p.approval, approved: true } }
          : p,
      ),
    } as UIMessage;
    const body = JSON.stringify([asked, approved]);
    await route(
      s,
      world,
      JSON.parse(body) as UIMessage[],
      scriptedStreamModel([[call("p1", "put", { k: "p1" })], [text("A done")]]),
      steps,
    );
    await route(
      s,
      world,
      JSON.parse(body) as UIMessage[],
      scriptedStreamModel([[call("p2", "put", { k: "p2" })], [text("B done")]]),
      steps,
    );
    await expectConsistent(s, world, [
      ["g1", "p1"],
      ["g1", "p2"],
    ]);
  });

  it(`a client-side tool's output POSTed again, the model going on otherwise: the retry's calls land with its answer (${saves})`, async () => {
    const { fp } = dbs.open();
    const world = new Set<string>();
    const s = await fp.createSession({ userId: "u" });
    const q = user("q", "ask me");
    await route(s, world, [q], scriptedStreamModel([[call("c1", "ask", { k: "c1" })]]), steps);
    const [asked, answer] = await loadChat(s);
    const answered = {
      ...answer!,
      parts: answer!.parts.map((p) => (p.type === "tool-ask" ? { ...p, state: "output-available" as const, output: "yes" } : p)),
    } as UIMessage;
    const body = JSON.stringify([asked, answered]);
    await route(
      s,
      world,
      JSON.parse(body) as UIMessage[],
      scriptedStreamModel([[call("p1", "put", { k: "p1" })], [text("A done")]]),
      steps,
    );
    await route(
      s,
      world,
      JSON.parse(body) as UIMessage[],
      scriptedStreamModel([[call("p2", "put", { k: "p2" })], [text("B done")]]),
      steps,
    );
    await expectConsistent(s, world, [["p1"], ["p2"]]);
  });
}

it("one loop's tools wrapped in two sets, one step calling both: its calls stay on one branch, with its answer", async () => {
  const { fp } = dbs.open();
  const world = new Set<string>();
  const s = await fp.createSession({ userId: "u" });
  const q = user("q", "put both");
  const { lastMessageId: after } = await saveChat(s, [q]);
  const { tools, undos } = worldTools(world);
  const other = { ...tools.put, execute: async ({ k }: { k: string }) => (await pause(5), world.add(k), k) };
  const result = streamText({
    model: scriptedStreamModel([[call("p1", "put", { k: "p1" }), call("o1", "other", { k: "o1" })], [text("done")]]),
    messages: await convertToModelMessages([q]),
    tools: {
      ...undoableTools(s, { put: tools.put }, { put: undos.put }, { after }),
      ...undoableTools(s, { other }, { other: undos.put }, { after }),
    },
    stopWhen: isStepCount(4),
  });
  expect(await result.text).toBe("done");
  expect(await s.branches()).toHaveLength(1);
  // Journaled in either order: the AI SDK starts both at once.
  expect((await s.toolTrack()).map((t) => [t.callId, t.applied]).sort()).toEqual([
    ["o1", true],
    ["p1", true],
  ]);
});
