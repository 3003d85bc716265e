// A file saved by hand to just what a tool call then writes there: the call found a hand edit and left it as it was.
// Recorded as any hand edit a call's run found (its undo puts it back), a "conversation" rewind is not refused over it,
// as it is not when the call writes other content; a "both" or "files" rewind still refuses it (no checkpoint holds
// it, until a checkpoint does), and a save made after the call is still drift the undo would write over.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** a.txt checkpointed at c0, saved by hand to `hand`, then written to `text` by a tool call. */
async function handThenCall(hand: string, text: string) {
  const ws = tempDir("forkpoint-hand-same-");
  const at = path.join(ws, "a.txt");
  fs.writeFileSync(at, "v0\n");
  const { fp } = dbs.open({ tools: [writeFileTool()] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  fs.writeFileSync(at, hand);
  await s.invoke("write_file", { path: at, text });
  return { s, at, c0 };
}

it("a hand edit the call then writes again as it is: the conversation rewind keeps it, as for other content", async () => {
  for (const text of ["mine\n", "the agent's\n"]) {
    const { s, at, c0 } = await handThenCall("mine\n", text);
    expect((await s.plan({ checkpointId: c0.id, scope: "conversation" })).drift).toEqual([]);
    await s.rollback(c0.id);
    expect(readOrNull(at)).toBe("mine\n");
  }
});

it("a hand edit the call then writes again as it is: a files or both rewind still refuses it", async () => {
  const { s, at, c0 } = await handThenCall("mine\n", "mine\n");
  for (const scope of ["both", "files"] as const) {
    expect(await rejectionOf(s.rollback(c0.id, { scope }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(readOrNull(at)).toBe("mine\n");
  }
  // Kept in a checkpoint, it is no longer drift: the rewind gives the files c0's content, the checkpoint the hand edit.
  const kept = await s.checkpoint({ name: "kept" });
  await s.rollback(c0.id, { scope: "both" });
  expect(readOrNull(at)).toBe("v0\n");
  await s.rollback(kept.id, { scope: "files" });
  expect(readOrNull(at)).toBe("mine\n");
});

it("a save after such a call is drift its undo would write over: refused", async () => {
  const { s, at, c0 } = await handThenCall("mine\n", "mine\n");
  fs.writeFileSync(at, "saved after the call\n");
  expect((await s.plan({ checkpointId: c0.id, scope: "conversation" })).drift).toEqual(["a.txt"]);
  expect(await rejectionOf(s.rollback(c0.id))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(at)).toBe("saved after the call\n");
});
