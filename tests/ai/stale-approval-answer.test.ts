// A stale tab still showing a tool approval asked (another tab approved it, the tool ran) answers it otherwise or asks on: a version without the approved call.
import { type UIMessage } from "ai";
import { expect, it } from "vitest";
import type { SessionHandle } from "../../src/index.js";
import { loadChat } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { guideRoute as route, user, worldTools } from "./guide-route.js";
import { call, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

/** The chat with the approvals of the calls `answers` names answered (call id: approved). */
function respond(chat: UIMessage[], answers: Record<string, boolean>): UIMessage[] {
  const answer = chat.at(-1)!;
  const parts = answer.parts.map((p) =>
    "toolCallId" in p && p.toolCallId in answers && p.state === "approval-requested"
      ? { ...p, state: "approval-responded" as const, approval: { ...p.approval, approved: answers[p.toolCallId]! } }
      : p,
  );
  return [...chat.slice(0, -1), { ...answer, parts } as UIMessage];
}

/** For each branch once switched to: the calls its chat shows run, the calls its track holds applied, the world. */
async function eachBranch(s: SessionHandle, world: Set<string>) {
  const out: { shown: string[]; applied: string[]; world: string[] }[] = [];
  for (const b of await s.branches()) {
    await s.switchBranch(b.id);
    const shown = (await loadChat(s)).flatMap((m) =>
      m.parts.flatMap((p) => ("toolCallId" in p && p.state === "output-available" ? [p.toolCallId] : [])),
    );
    const applied = (await s.toolTrack()).filter((t) => t.applied).map((t) => t.callId!);
    out.push({ shown: shown.sort(), applied: applied.sort(), world: [...world].sort() });
  }
  return out;
}

for (const steps of [false, true]) {
  for (const before of [false, true]) {
    const how = `${steps ? "saved after each step" : "saved at the end"}${before ? ", a call made with the question" : ""}`;
    it(`an approval denied by a stale tab after it was approved and ran: the denied version holds no approved call (${how})`, async () => {
      const { fp } = dbs.open();
      const world = new Set<string>();
      const s = await fp.createSession({ userId: "u" });
      const first = [...(before ? [call("a1", "put", { k: "a1" })] : []), call("g1", "send", { k: "g1" })];
      await route(s, world, [user("q", "send it")], scriptedStreamModel([first]), steps);
      // Both tabs show the approval asked; the first approves it (g1 runs, then p1), the other, not reloaded, denies it.
      const shown = JSON.stringify(await loadChat(s));
      const approve = respond(JSON.parse(shown) as UIMessage[], { g1: true });
      await route(s, world, approve, scriptedStreamModel([[call("p1", "put", { k: "p1" })], [text("sent")]]), steps);
      const deny = respond(JSON.parse(shown) as UIMessage[], { g1: false });
      await route(s, world, deny, scriptedStreamModel([[call("p2", "put", { k: "p2" })], [text("not sent")]]), steps);

      const kept = before ? ["a1"] : [];
      // The denied answer is current: the approved call and the calls after it are undone.
      const chat = await loadChat(s);
      expect(chat.at(-1)!.parts.find((p) => "toolCallId" in p && p.toolCallId === "g1")).toMatchObject({ state: "output-denied" });
      expect((await s.toolTrack()).filter((t) => t.applied).map((t) => t.callId)).toEqual([...kept, "p2"]);
      expect([...world].sort()).toEqual([...kept, "p2"]);
      // Each answer is a version of the other (`< 2/2 >`), and every branch shows what it holds.
      const [answer] = (await s.history({ withVersions: true })).filter((m) => m.role === "assistant");
      expect([answer!.versions!.index, answer!.versions!.count]).toEqual([1, 2]);
      const seen = await eachBranch(s, world);
      for (const b of seen) {
        expect(b.applied).toEqual(b.shown);
        expect(b.world).toEqual(b.shown);
      }
      expect(seen.map((b) => b.shown.join(",")).sort()).toEqual([[...kept, "g1", "p1"].sort().join(","), [...kept, "p2"].join(",")].sort());
    });
  }
}

for (const steps of [false, true]) {
  const how = steps ? "saved after each step" : "saved at the end";
  it(`a question asked by a stale tab still showing the approval asked, after it was approved and ran: its branch holds no approved call (${how})`, async () => {
    const { fp } = dbs.open();
    const world = new Set<string>();
    const s = await fp.createSession({ userId: "u" });
    await route(
      s,
      world,
      [user("q", "send it")],
      scriptedStreamModel([[call("a1", "put", { k: "a1" }), call("g1", "send", { k: "g1" })]]),
      steps,
    );
    const shown = JSON.stringify(await loadChat(s));
    const approve = respond(JSON.parse(shown) as UIMessage[], { g1: true });
    await route(s, world, approve, scriptedStreamModel([[call("p1", "put", { k: "p1" })], [text("sent")]]), steps);
    // The other tab leaves the approval unanswered and asks on: its chat shows g1 not run.
    const asked = [...(JSON.parse(shown) as UIMessage[]), user("q2", "and then")];
    await route(s, world, asked, scriptedStreamModel([[call("p2", "put", { k: "p2" })], [text("then done")]]), steps);

    expect((await s.toolTrack()).filter((t) => t.applied).map((t) => t.callId)).toEqual(["a1", "p2"]);
    expect([...world].sort()).toEqual(["a1", "p2"]);
    const seen = await eachBranch(s, world);
    for (const b of seen) {
      expect(b.applied).toEqual(b.shown);
      expect(b.world).toEqual(b.shown);
    }
    expect(seen.map((b) => b.shown.join(",")).sort()).toEqual(["a1,g1,p1", "a1,p2"]);
  });
}

// Tab A answers both approvals of one step; a stale tab answers them otherwise, approving g1 again: a version of its own.
const twoAnswers = [
  { a: { g1: true, g2: true }, b: { g1: true, g2: false }, shown: { a: "g1,g2,p1", b: "g1,p2" } },
  { a: { g1: true, g2: false }, b: { g1: true, g2: true }, shown: { a: "g1,p1", b: "g1,g2,p2" } },
];
for (const steps of [false, true]) {
  for (const { a, b, shown: expected } of twoAnswers) {
    const how = `${JSON.stringify(a)} then ${JSON.stringify(b)}, ${steps ? "saved after each step" : "saved at the end"}`;
    it(`two approvals answered otherwise by a stale tab: its branch holds the calls it approves, run once (${how})`, async () => {
      const { fp } = dbs.open();
      const world = new Set<string>();
      const s = await fp.createSession({ userId: "u" });
      const asked = [call("g1", "send", { k: "g1" }), call("g2", "send", { k: "g2" })];
      await route(s, world, [user("q", "send them")], scriptedStreamModel([asked]), steps);
      const shown = JSON.stringify(await loadChat(s));
      await route(
        s,
        world,
        respond(JSON.parse(shown) as UIMessage[], a),
        scriptedStreamModel([[call("p1", "put", { k: "p1" })], [text("A")]]),
        steps,
      );
      await route(
        s,
        world,
        respond(JSON.parse(shown) as UIMessage[], b),
        scriptedStreamModel([[call("p2", "put", { k: "p2" })], [text("B")]]),
        steps,
      );

      // The step's two approved calls run at once: in either order.
      const applied = (await s.toolTrack()).filter((t) => t.applied).map((t) => t.callId!);
      expect(applied.sort()).toEqual(expected.b.split(","));
      const [answer] = (await s.history({ withVersions: true })).filter((m) => m.role === "assistant");
      expect([answer!.versions!.index, answer!.versions!.count]).toEqual([1, 2]);
      const seen = await eachBranch(s, world);
      for (const branch of seen) {
        expect(branch.applied).toEqual(branch.shown);
        expect(branch.world).toEqual(branch.shown);
      }
      expect(seen.map((branch) => branch.shown.join(",")).sort()).toEqual([expected.a, expected.b].sort());
    });
  }
}
