// Deleting checkpoints never breaks what refers to them: a running rollback's target stays, and listing pages begun
// before a deletion stay newest first (a deleted checkpoint's place in the order is never handed to a new one).
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConflictError, defineTool, type Forkpoint } from "../../src/index.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let fp: Forkpoint;
let releaseUndo: () => void = () => {};
let undoStarted: Promise<void>;
let markUndoStarted: () => void = () => {};
const slow = defineTool<{ k: number }, null>({
  name: "slow",
  run: async () => null,
  undo: async () => {
    markUndoStarted();
    await new Promise<void>((resolve) => (releaseUndo = resolve));
  },
});

beforeEach(() => {
  dir = makeTempDir("forkpoint-cp-life-");
  fp = openForkpoint({ path: path.join(dir, "db.sqlite"), tools: [slow] });
  undoStarted = new Promise<void>((resolve) => (markUndoStarted = resolve));
});
afterEach(async () => {
  releaseUndo();
  await fp.close();
  removeDir(dir);
});

describe("checkpoint lifetime", () => {
  it("refuses to delete (or prune) the checkpoint a running rollback goes to; the new branch forks from it", async () => {
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "hi" });
    // Long enough to outlast a loaded machine's steps up to the delete; waited out before the prune.
    const target = await s.checkpoint({ name: "target", expiresIn: 2000 });
    await s.invoke("slow", { k: 1 });
    const moving = s.rollback(target.id);
    await undoStarted;
    const e = await rejectionOf(s.deleteCheckpoint(target.id));
    expect(e).toBeInstanceOf(ConflictError);
    expect(e.code).toBe("CHECKPOINT_IN_USE");
    // Expired now, but the move still needs it.
    while (Date.now() <= target.expiresAt!.getTime() + 50) await new Promise((r) => setTimeout(r, 50));
    expect((await fp.prune({ vacuum: false })).checkpoints).toBe(0);
    releaseUndo();
    const { branch } = await moving;
    expect(branch.forkCheckpointId).toBe(target.id);
    expect(await fp.verify()).toMatchObject({ ok: true, problems: [] });
  });

  it("keeps listing pages newest first when the newest checkpoints are deleted and new ones taken", async () => {
    const s = await fp.createSession({ userId: "u" });
    const made = [];
    for (const name of ["c0", "c1", "c2", "c3"]) made.push(await s.checkpoint({ name }));
    const first = await fp.listCheckpoints({ userId: "u", limit: 2 });
    expect(first.items.map((c) => c.name)).toEqual(["c3", "c2"]);
    for (const cp of made.slice(1).reverse()) await s.deleteCheckpoint(cp.id);
    await s.checkpoint({ name: "newest" });
    const second = await fp.listCheckpoints({ userId: "u", limit: 2, cursor: first.nextCursor });
    expect(second.items.map((c) => c.name)).toEqual(["c0"]);
    expect((await fp.listCheckpoints({ userId: "u" })).items.map((c) => c.name)).toEqual(["newest", "c0"]);
  });
});
