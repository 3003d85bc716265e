// The AI SDK's saves keep the handle's order: a rollback made right after a save, not awaited, goes after all of it
// (its read and its writes), so the message saved leaves the conversation with the rollback, as an append's would.
import { expect, it } from "vitest";
import { saveChat, saveModelMessages } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

const question = (id: string, text: string) => ({ id, role: "user" as const, parts: [{ type: "text" as const, text }] });

it("saveChat and saveModelMessages, then a rollback made right after: the save lands first, the rollback leaves it", async () => {
  const { fp } = dbs.open();
  const saves = {
    saveChat: (s: Parameters<typeof saveChat>[0], texts: string[]) =>
      saveChat(
        s,
        texts.map((t, i) => question(`q${i}`, t)),
      ),
    saveModelMessages: (s: Parameters<typeof saveChat>[0], texts: string[]) =>
      saveModelMessages(
        s,
        texts.map((content) => ({ role: "user" as const, content })),
      ),
  };
  for (const [name, save] of Object.entries(saves)) {
    const s = await fp.createSession({ userId: "u" });
    await save(s, ["one"]);
    const cp = await s.checkpoint({ name: "before two" });
    const saved = save(s, ["one", "two"]);
    const back = s.rollback(cp.id);
    const [, moved] = await Promise.all([saved, back]);
    expect([name, moved.branch.reason]).toEqual([name, "rollback"]);
    expect((await s.history()).length).toBe(1);
    expect((await s.history({ branchId: (await s.branches()).find((b) => b.id !== moved.branch.id)!.id })).length).toBe(2);
  }
});
