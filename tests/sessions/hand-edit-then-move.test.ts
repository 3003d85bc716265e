// A hand edit no checkpoint holds stays drift when a "conversation" move's undo or replay then changes the same file:
// the move's scan does not make the hand edit forkpoint's, so a later files move refuses rather than losing it.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { appendLineTool, readOrNull } from "../fixtures/file-tools.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
const file = (rel: string) => path.join(ws, rel);

beforeEach(() => {
  dir = makeTempDir("forkpoint-hand-then-move-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [appendLineTool()] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

/** L1 (checkpoint C1), a hand edit of the log no checkpoint holds, then L2 appended to it by a call. */
async function handEditThenCall() {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.invoke("append_line", { path: file("log"), line: "L1" });
  const c1 = await s.checkpoint({ name: "C1" });
  await s.append({ role: "user", content: "m" });
  fs.appendFileSync(file("log"), "HAND\n");
  await s.invoke("append_line", { path: file("log"), line: "L2" });
  return { s, c1 };
}

it("a conversation rewind undoes a call over a hand edit: a files restore after it is refused", async () => {
  const { s, c1 } = await handEditThenCall();
  await s.rollback(c1.id, { scope: "conversation" });
  expect(readOrNull(file("log"))).toBe("L1\nHAND\n");

  expect(await rejectionOf(s.rollback(c1.id, { scope: "files" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(file("log"))).toBe("L1\nHAND\n");
  // Forced, the hand edit is saved first.
  const forced = await s.rollback(c1.id, { scope: "files", force: true });
  expect(forced.savedDrift?.files).toEqual(["log"]);
  expect(readOrNull(file("log"))).toBe("L1\n");
  await s.rollback(forced.savedDrift!.checkpointId, { scope: "files" });
  expect(readOrNull(file("log"))).toBe("L1\nHAND\n");
});

it("undone and replayed by conversation moves: the hand edit still stays drift", async () => {
  const { s, c1 } = await handEditThenCall();
  const branch = (await s.info()).currentBranchId;
  await s.rollback(c1.id, { scope: "conversation" });
  await s.switchBranch(branch, { scope: "conversation" });
  expect(readOrNull(file("log"))).toBe("L1\nHAND\nL2\n");

  expect(await rejectionOf(s.rollback(c1.id, { scope: "both" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(file("log"))).toBe("L1\nHAND\nL2\n");
});
