// A hand edit no checkpoint holds stays drift when a tool call then changes the same file (review 24): the call's scan
// does not make the hand edit forkpoint's, so a rewind refuses rather than writing over it unsaved.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { readOrNull, writeFileTool } from "../fixtures/file-tools.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
const file = (rel: string) => path.join(ws, rel);

beforeEach(() => {
  dir = makeTempDir("forkpoint-hand-then-call-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [writeFileTool()] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

it("a file edited by hand, then written by a tool: the rewind to before is refused and the file kept", async () => {
  fs.writeFileSync(file("app.ts"), "const a = 1;\n");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const before = await s.checkpoint({ name: "before agent" });
  fs.writeFileSync(file("app.ts"), "const a = 1;\n// my note\n");
  await s.invoke("write_file", { path: file("app.ts"), text: "const a = 42;\n// my note\n" });

  const error = await rejectionOf(s.rollback(before.id, { scope: "both" }));
  expect(error).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(file("app.ts"))).toBe("const a = 42;\n// my note\n");
  // Kept in a checkpoint, the rewind goes through: the call's undo puts the hand edit back, which no checkpoint holds,
  // so it stays as it is (drift still), and the checkpoint brings the call's version back.
  const kept = await s.checkpoint({ name: "kept" });
  const moved = await s.rollback(before.id, { scope: "both" });
  expect(moved.files?.kept).toEqual(["app.ts"]);
  expect(readOrNull(file("app.ts"))).toBe("const a = 1;\n// my note\n");
  expect(await rejectionOf(s.rollback(kept.id, { scope: "files" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  const forced = await s.rollback(kept.id, { scope: "files", force: true });
  expect(readOrNull(file("app.ts"))).toBe("const a = 42;\n// my note\n");
  await s.rollback(forced.savedDrift!.checkpointId, { scope: "files" });
  expect(readOrNull(file("app.ts"))).toBe("const a = 1;\n// my note\n");
});

it("a file made by hand, then rewritten by a tool: a files rollback is refused, not a silent delete", async () => {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const before = await s.checkpoint({ name: "before" });
  fs.writeFileSync(file("NOTES.md"), "mine\n");
  await s.invoke("write_file", { path: file("NOTES.md"), text: "mine\nand the agent's\n" });
  const error = await rejectionOf(s.rollback(before.id, { scope: "files" }));
  expect(error).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(file("NOTES.md"))).toBe("mine\nand the agent's\n");
});

it("with a checkpoint after the hand edit, the call's change is its own: the rewind undoes it alone", async () => {
  fs.writeFileSync(file("app.ts"), "const a = 1;\n");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  fs.writeFileSync(file("app.ts"), "const a = 1;\n// my note\n");
  const kept = await s.checkpoint({ name: "with my note" });
  await s.invoke("write_file", { path: file("app.ts"), text: "const a = 42;\n// my note\n" });
  await s.rollback(kept.id, { scope: "both" });
  expect(readOrNull(file("app.ts"))).toBe("const a = 1;\n// my note\n");
});
