// A hand edit no checkpoint holds, changed by a call, comes back with that call's undo as drift: a rewind keeps it.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import type { SessionHandle } from "../../src/index.js";
import { readOrNull, tempDir } from "../fixtures/file-tools.js";
import { put, remove, write } from "../fixtures/put-back-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** Checkpoint `start` (holding `d` as `saved`, or no `d`), then `d` written by hand, then `calls` run on it. */
async function handEditThen(saved: string | null, calls: (s: SessionHandle, d: string) => Promise<unknown>) {
  const ws = tempDir("forkpoint-hand-undone-");
  const d = path.join(ws, "d");
  fs.writeFileSync(path.join(ws, "a"), "a");
  put(d, saved);
  const { fp } = dbs.open({ tools: [remove, write] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  fs.writeFileSync(d, "by hand");
  await calls(s, d);
  return { s, d, start };
}

const removeIt = (s: SessionHandle, d: string) => s.invoke("remove", { path: d });
const removeThenWrite = async (s: SessionHandle, d: string) => {
  await s.invoke("remove", { path: d });
  await s.invoke("write", { path: d, text: "T" });
};

for (const [name, calls] of [
  ["deleted", removeIt],
  ["deleted then written", removeThenWrite],
] as const) {
  it(`a file made by hand, then ${name} by calls: a both rewind keeps it, as drift`, async () => {
    const { s, d, start } = await handEditThen(null, calls);
    const moved = await s.rollback(start.id, { scope: "both" });
    expect(moved.undone.length).toBeGreaterThan(0);
    expect(moved.files?.kept).toEqual(["d"]);
    expect(readOrNull(d)).toBe("by hand");
    expect(await rejectionOf(s.rollback(start.id, { scope: "files" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(readOrNull(d)).toBe("by hand");
  });
}

it("a hand edit of a saved file, then deleted by a call: a forced both rewind keeps it, as drift", async () => {
  const { s, d, start } = await handEditThen("saved", removeIt);
  expect(await rejectionOf(s.rollback(start.id, { scope: "both" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  const moved = await s.rollback(start.id, { scope: "both", force: true });
  expect(moved.files?.kept).toEqual(["d"]);
  expect(readOrNull(d)).toBe("by hand");
  const forced = await s.rollback(start.id, { scope: "files", force: true });
  expect(readOrNull(d)).toBe("saved");
  await s.rollback(forced.savedDrift!.checkpointId, { scope: "files" });
  expect(readOrNull(d)).toBe("by hand");
});

it("a conversation rewind puts the hand edit back as drift: a files restore after it is refused", async () => {
  const { s, d, start } = await handEditThen(null, removeIt);
  await s.rollback(start.id, { scope: "conversation" });
  expect(readOrNull(d)).toBe("by hand");
  expect(await rejectionOf(s.rollback(start.id, { scope: "files" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(d)).toBe("by hand");
});
