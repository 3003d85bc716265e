// An approval or a client tool's output POSTed twice at once, saved per step, both models numbering calls alike: each answer keeps its own calls.
import { convertToModelMessages, createIdGenerator, isStepCount, streamText, tool, type LanguageModel, type UIMessage } from "ai";
import { expect, it } from "vitest";
import { z } from "zod";
import type { SessionHandle } from "../../src/index.js";
import { loadChat, saveChat, undoableTools } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

const user = (id: string, t: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text: t }] });
/** Waits for `p`, bounded: a test gone wrong fails rather than hangs. */
const until = (p: Promise<void>) => Promise.race([p, new Promise<void>((resolve) => setTimeout(resolve, 5_000))]);

/** The guide's route, saving in `onStepEnd` too; `stepSaved` is told once each step's save is done. */
async function route(s: SessionHandle, world: Set<string>, messages: UIMessage[], model: LanguageModel, stepSaved = () => {}) {
  const asked = await saveChat(s, messages);
  const after = asked.lastMessageId;
  const execute = async ({ k }: { k: string }) => (world.add(k), k);
  const tools = {
    put: tool({ inputSchema: z.object({ k: z.string() }), execute }),
    send: tool({ inputSchema: z.object({ k: z.string() }), execute, needsApproval: true }),
    ask: tool({ inputSchema: z.object({ k: z.string() }) }),
  };
  const undo = ({ args }: { args: { k: string } }) => void world.delete(args.k);
  const result = streamText({
    model,
    messages: await convertToModelMessages(messages, { ignoreIncompleteToolCalls: true }),
    tools: undoableTools(s, tools, { put: undo, send: undo }, { after }),
    stopWhen: isStepCount(6),
  });
  await new Promise<void>((resolve, reject) => {
    const response = result.toUIMessageStreamResponse({
      originalMessages: messages,
      generateMessageId: createIdGenerator({ prefix: "msg", size: 16 }),
      onStepEnd: async ({ messages: all }) => {
        await saveChat(s, all, { after });
        stepSaved();
      },
      onEnd: async ({ messages: all }) => saveChat(s, all, { after }).then(() => resolve(), reject),
    });
    void response.text();
  });
}

/** For each branch, once switched to: the calls (id:input) its chat shows done, those its track holds applied, the world. */
async function eachBranch(s: SessionHandle, world: Set<string>) {
  const out: { shown: string[]; applied: string[]; world: string[] }[] = [];
  for (const b of await s.branches()) {
    await s.switchBranch(b.id);
    const shown = (await loadChat(s)).flatMap((m) =>
      m.parts.flatMap((p) =>
        "toolCallId" in p && p.state === "output-available" && p.type !== "tool-ask"
          ? [`${p.toolCallId}:${(p.input as { k: string }).k}`]
          : [],
      ),
    );
    const track = (await s.toolTrack()).filter((t) => t.applied);
    out.push({
      shown: shown.sort(),
      applied: track.map((t) => `${t.callId}:${(t.args as { k: string }).k}`).sort(),
      world: [...world].sort(),
    });
  }
  return out;
}

for (const resumed of ["a tool approval", "a client-side tool's output"]) {
  it(`${resumed} POSTed twice at once, saved per step, calls numbered alike: each answer's branch holds its calls`, async () => {
    const { fp } = dbs.open();
    const world = new Set<string>();
    const s = await fp.createSession({ userId: "u" });
    const approval = resumed === "a tool approval";
    const first = approval ? call("call_0", "send", { k: "g" }) : call("call_0", "ask", { k: "g" });
    await route(s, world, [user("q", "go")], scriptedStreamModel([[first]]));
    const [asked, answer] = await loadChat(s);
    const resume = {
      ...answer!,
      parts: answer!.parts.map((p) =>
        p.type === "tool-send" && p.state === "approval-requested"
          ? { ...p, state: "approval-responded" as const, approval: { ...p.approval, approved: true } }
          : p.type === "tool-ask"
            ? { ...p, state: "output-available" as const, output: "yes" }
            : p,
      ),
    } as UIMessage;
    const body = JSON.stringify([asked, resume]);
    // B's model answers once A's first step is saved, and A's goes on once B's is: B's step save finds A's form, naming
    // `call_1` with another input, the latest after what both requests follow.
    let aSaved = () => {};
    let bSaved = () => {};
    const aFirst = new Promise<void>((resolve) => (aSaved = resolve));
    const bFirst = new Promise<void>((resolve) => (bSaved = resolve));
    const model = (k: string, wait: (step: number) => Promise<void>) =>
      scriptedStreamModel([[call("call_1", "put", { k })], [call("call_2", "put", { k: `${k}b` })], [text(`${k} done`)]], wait);
    await Promise.all([
      route(
        s,
        world,
        JSON.parse(body) as UIMessage[],
        model("a", async (step) => void (step === 1 && (await until(bFirst)))),
        aSaved,
      ),
      route(
        s,
        world,
        JSON.parse(body) as UIMessage[],
        model("b", async (step) => void (step === 0 && (await until(aFirst)))),
        bSaved,
      ),
    ]);

    const seen = await eachBranch(s, world);
    for (const b of seen) {
      expect(b.applied).toEqual(b.shown);
      expect(b.world).toEqual(b.shown.map((c) => c.split(":")[1]).sort());
    }
    const g = approval ? ["call_0:g"] : [];
    expect(seen.map((b) => b.shown.join(",")).sort()).toEqual([
      [...g, "call_1:a", "call_2:ab"].sort().join(","),
      [...g, "call_1:b", "call_2:bb"].sort().join(","),
    ]);
  });
}
