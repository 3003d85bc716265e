// Pins a defect: while a route's loop runs its wrapped tools, another tab appends a message to the session (no move,
// so the tools go on). The loop's tool call lands after that message, on the current branch; the answer, saved
// `after` its question as the README's route handler does, lands on a new branch forked right after the question,
// without the call. The answer says "Saved note.md" on a branch whose track has no such call (picking that version
// undoes the file), while the other tab's conversation holds an effect it never asked for.
import { tool, type UIMessage } from "ai";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { saveChat, undoableTools } from "../../src/ai/index.js";
import { openForkpoint } from "../fixtures/backend.js";
import { tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const question: UIMessage = { id: "u1", role: "user", parts: [{ type: "text", text: "write a note" }] };
const answer: UIMessage = { id: "a1", role: "assistant", parts: [{ type: "text", text: "Saved note.md." }] };

describe("an AI SDK loop's tool call while another tab appends", () => {
  it.fails("lands with the answer that made it, or is refused before it runs", async () => {
    const { fp, path: db } = dbs.open();
    const dir = tempDir();
    const s = await fp.createSession({ userId: "u" });
    const asked = await saveChat(s, [question]);
    const note = tool({
      inputSchema: z.object({ name: z.string() }),
      execute: async ({ name }) => (fs.writeFileSync(path.join(dir, name), "n"), { wrote: name }),
    });
    const tools = undoableTools(s, { write_note: note }, { write_note: async ({ args }) => fs.rmSync(path.join(dir, args.name)) });
    const other = await dbs.track(openForkpoint({ path: db })).getSession(s.id, { userId: "u" });
    await other.append({ role: "user", content: "and another thing" });

    const ran = await Promise.resolve(
      tools.write_note!.execute!({ name: "note.md" }, { toolCallId: "c1", messages: [], context: {} }),
    ).then(
      () => true,
      () => false,
    );
    const saved = await saveChat(s, [question, answer], { after: asked.lastMessageId });
    const answerBranch = saved.branchId;
    const answerCalls = (await s.toolTrack({ branchId: answerBranch })).map((t) => t.callId);
    // Either the call was refused (nothing ran), or it is on the answer's own lineage.
    if (ran) expect(answerCalls).toEqual(["c1"]);
    else expect(fs.existsSync(path.join(dir, "note.md"))).toBe(false);
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual([]);
  });
});
