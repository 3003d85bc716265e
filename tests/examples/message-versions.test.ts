// examples/chat-app's `< 2/2 >` picker of an answer saved after each step, forked before a later form of it.
import type { LanguageModel, UIMessage } from "ai";
import { expect, it } from "vitest";
import type { SessionHandle } from "../../src/index.js";
import { loadChat, saveChat } from "../../src/ai/index.js";
import { versionsByMessage } from "../../examples/chat-app/server/message-versions.js";
import { guideRoute, user } from "../ai/guide-route.js";
import { call, scriptedStreamModel, text } from "../ai/mock-model.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** The guide's route without `at`, saving after each step and at the end; `send` needs approval. */
const route = (s: SessionHandle, messages: UIMessage[], model: LanguageModel) => guideRoute(s, new Set(), messages, model, true);

/** The chat with the approval of `g1` answered. */
function respond(chat: UIMessage[], approved: boolean): UIMessage[] {
  const answer = chat.at(-1)!;
  const parts = answer.parts.map((p) =>
    "toolCallId" in p && p.toolCallId === "g1" && p.state === "approval-requested"
      ? { ...p, state: "approval-responded" as const, approval: { ...p.approval, approved } }
      : p,
  );
  return [...chat.slice(0, -1), { ...answer, parts } as UIMessage];
}

for (const how of ["its text edited", "its approval denied by a stale tab"] as const) {
  it(`an answer of several steps forked before a later form (${how}): the page shows its < 2/2 >`, async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const steps = [[call("a1", "put", { k: "a1" })], [call("a2", "put", { k: "a2" }), call("g1", "send", { k: "g1" })]];
    await route(s, [user("q", "go")], scriptedStreamModel(steps));
    const shown = await loadChat(s);
    await route(s, respond(shown, true), scriptedStreamModel([[call("p1", "put", { k: "p1" })], [text("sent")]]));
    if (how === "its text edited") {
      const chat = await loadChat(s);
      const answer = chat.at(-1)!;
      const parts = answer.parts.map((p) => (p.type === "text" ? { ...p, text: "edited" } : p));
      expect((await saveChat(s, [...chat.slice(0, -1), { ...answer, parts }])).forked).toBe("edit");
    } else {
      await route(s, respond(shown, false), scriptedStreamModel([[text("not sent")]]));
    }

    const chat = await loadChat(s);
    const entries = await s.history({ withVersions: true });
    // The answer's first entry has no other version: the fork came after it.
    expect(entries.filter((m) => m.clientId === chat[1]!.id)[0]!.versions.count).toBe(1);
    const versions = versionsByMessage(entries);
    expect(chat.map((m) => [versions[m.id]!.index, versions[m.id]!.count])).toEqual([
      [0, 1],
      [1, 2],
    ]);
  });
}
