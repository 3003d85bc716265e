// While a route's loop runs its wrapped tools, another tab appends a message to the session (no move, so the tools go
// on). The loop's tools follow the request's question (`undoableTools`' `after`, as the README's route handler passes
// it), as the answer saved `after` that question does: the call and the answer land together on a new branch forked
// right after the question, the other tab's conversation stays current and holds no call, and switching to the answer's
// branch keeps the note (never written twice) while a move away from it removes the note.
import { tool, type UIMessage } from "ai";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { saveChat, undoableTools } from "../../src/ai/index.js";
import { NotFoundError, ValidationError } from "../../src/index.js";
import { openForkpoint } from "../fixtures/backend.js";
import { tempDir } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const question: UIMessage = { id: "u1", role: "user", parts: [{ type: "text", text: "write a note" }] };
const answer: UIMessage = { id: "a1", role: "assistant", parts: [{ type: "text", text: "Saved note.md." }] };

describe("an AI SDK loop's tool call while another tab appends", () => {
  it("lands with the answer that made it, off the other tab's conversation", async () => {
    const { fp, path: db } = dbs.open();
    const dir = tempDir();
    const note = path.join(dir, "note.md");
    const s = await fp.createSession({ userId: "u" });
    const asked = await saveChat(s, [question]);
    let writes = 0;
    const write_note = tool({
      inputSchema: z.object({ name: z.string() }),
      execute: async ({ name }) => (writes++, fs.writeFileSync(path.join(dir, name), "n"), { wrote: name }),
    });
    const tools = undoableTools(
      s,
      { write_note },
      { write_note: async ({ args }) => fs.rmSync(path.join(dir, args.name)) },
      { after: asked.lastMessageId },
    );
    const other = await dbs.track(openForkpoint({ path: db })).getSession(s.id, { userId: "u" });
    await other.append({ role: "user", content: "and another thing" });
    const otherBranch = (await other.info()).currentBranchId;

    await tools.write_note!.execute!({ name: "note.md" }, { toolCallId: "c1", messages: [], context: {} });
    const saved = await saveChat(s, [question, answer], { after: asked.lastMessageId });
    expect(saved.branchId).not.toBe(otherBranch);
    expect((await s.toolTrack({ branchId: saved.branchId })).map((t) => t.callId)).toEqual(["c1"]);
    expect((await s.history({ branchId: saved.branchId })).map((m) => m.role)).toEqual(["user", "assistant"]);
    // The other tab's conversation is still the current one, without the call.
    expect((await s.info()).currentBranchId).toBe(otherBranch);
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual([]);
    expect(fs.existsSync(note)).toBe(true);

    // Picking the answer's version keeps the note as it is: the call is not run again.
    await s.switchBranch(saved.branchId);
    expect([fs.existsSync(note), writes]).toEqual([true, 1]);
    // Back to the other tab's conversation: the note is undone; and again to the answer's: replayed once.
    await s.switchBranch(otherBranch);
    expect(fs.existsSync(note)).toBe(false);
    await s.switchBranch(saved.branchId);
    expect([fs.existsSync(note), writes]).toEqual([true, 2]);
  });

  it("a bad `after` is refused: not a message id when the tools are wrapped, an unknown one before the tool runs", async () => {
    const { fp } = dbs.open();
    const dir = tempDir();
    const s = await fp.createSession({ userId: "u" });
    let runs = 0;
    const note = tool({ inputSchema: z.object({}), execute: async () => (runs++, { wrote: true }) });
    for (const after of ["", 7] as unknown as string[]) expect(() => undoableTools(s, { note }, {}, { after })).toThrow(ValidationError);
    const tools = undoableTools(s, { note }, { note: () => fs.rmSync(path.join(dir, "x"), { force: true }) }, { after: "msg_unknown" });
    const refused = await rejectionOf(Promise.resolve(tools.note!.execute!({}, { toolCallId: "c1", messages: [], context: {} })));
    expect(refused).toBeInstanceOf(NotFoundError);
    expect([runs, await s.toolTrack()]).toEqual([0, []]);
  });
});
