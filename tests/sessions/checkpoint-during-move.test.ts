// A checkpoint of a workspace session taken from another handle while a "both" move runs its undo steps is refused
// (MOVE_IN_PROGRESS, nothing written): its files would hold some of the move's steps while the track says others.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { ConflictError, defineTool, type Forkpoint } from "../../src/index.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let db: string;
const opened: Forkpoint[] = [];

beforeEach(() => {
  dir = makeTempDir("forkpoint-cp-during-move-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  db = path.join(dir, "forkpoint.db");
});
afterEach(async () => {
  for (const fp of opened.splice(0)) await fp.close();
  removeDir(dir);
});

it("another handle's checkpoint while a 'both' move undoes is MOVE_IN_PROGRESS, and goes through once it ends", async () => {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let undoing = false;
  const file = (name: string) => path.join(ws, name);
  // Writes a file; its undo removes it, after waiting for the test to let it.
  const gatedWrite = defineTool<{ name: string }, null>({
    name: "gated_write",
    run: ({ name }) => {
      fs.writeFileSync(file(name), name);
      return null;
    },
    undo: async ({ args }) => {
      undoing = true;
      await gate;
      fs.rmSync(file(args.name), { force: true });
    },
  });
  const fp = openForkpoint({ path: db, tools: [gatedWrite] });
  opened.push(fp);
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("gated_write", { name: "a" });
  await s.invoke("gated_write", { name: "b" });
  // Its writes wait for another handle's move at most a second (not the default 15 s) before they are refused.
  const other = openForkpoint({ path: db, tools: [gatedWrite], busyTimeoutMs: 1_000 });
  opened.push(other);
  const t = await other.getSession(s.id, { userId: "u" });
  const before = (await t.listCheckpoints()).items.length;

  const moving = s.rollback(start.id, { scope: "both" });
  while (!undoing) await new Promise((resolve) => setTimeout(resolve, 5));
  const refused = await rejectionOf(t.checkpoint({ name: "mid-move" }));
  expect(refused).toBeInstanceOf(ConflictError);
  expect(refused.code).toBe("MOVE_IN_PROGRESS");
  open();
  await moving;
  expect((await t.listCheckpoints()).items.length).toBe(before);
  // Once the move ended: files and track agree, and the checkpoint holds them.
  const after = await t.checkpoint({ name: "after" });
  expect(fs.existsSync(file("a")) || fs.existsSync(file("b"))).toBe(false);
  expect((await t.toolTrack()).every((c) => !c.applied)).toBe(true);
  expect((await t.diffFiles(start.id, after.id)).added).toEqual([]);
});
