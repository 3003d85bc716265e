// A save that edits a message appends the messages after it right after it, on the edit's branch, whatever another tab does.
import type { UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { saveChat, type SaveResult } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const q = (id: string, t: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text: t }] });
const a = (id: string, t: string): UIMessage => ({ id, role: "assistant", parts: [{ type: "text", text: t }] });
// A stored UI message's text (its content is the message's parts, or the whole message).
const texts = (ms: { content: unknown }[]) =>
  ms.map((m) => {
    const c = m.content as { text: string }[] | { parts: { text: string }[] };
    return Array.isArray(c) ? c[0]!.text : c.parts[0]!.text;
  });

describe("saveChat of an edited message and new ones, while another tab moves the session", () => {
  // The other tab moves right after the edit (its event): a rollback or a switch back to the branch edited. Each case
  // runs a few times, as the other tab's move and this save's append race.
  for (const withIfAt of [false, true]) {
    it(`lands the new messages after the edited one, on its branch${withIfAt ? " (with ifAt)" : ""}`, async () => {
      for (let i = 0; i < 4; i++) {
        const { fp, path } = dbs.open();
        const other = dbs.open({ path }).fp;
        const s = await fp.createSession({ userId: "u" });
        const s2 = await other.getSession(s.id, { userId: "u" });
        await saveChat(s, [q("q1", "hello"), a("a1", "hi")]);
        const A = (await s.info()).currentBranchId;
        const cp = await s.checkpoint({ name: "x" });
        let moved: Promise<unknown> | undefined;
        fp.on("edit", () => void (moved ??= i % 2 ? s2.switchBranch(A) : s2.rollback(cp.id)));
        const list = [q("q1", "hello again"), a("a2", "answer to the edit")];
        const r: SaveResult = await saveChat(s, list, withIfAt ? { ifAt: { branchId: A } } : {});
        await moved;
        expect(r).toMatchObject({ forked: "edit", appended: 1 });
        expect(r.branchId).not.toBe(A);
        expect(texts(await s.history({ branchId: r.branchId }))).toEqual(["hello again", "answer to the edit"]);
        // The other tab's move stands: its branch holds nothing of this save.
        expect(texts(await s.history())).not.toContain("answer to the edit");
      }
    });
  }
});
