// Another opener's branches and moves around a failed guarded block: what a switch to them enters, what undo takes back.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** A promise and its resolver: the blocks take turns. */
function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

const contents = async (s: { history(): Promise<{ content: unknown }[]> }) => (await s.history()).map((m) => m.content);

it("a switch to a branch another opener's failed block made among a failed block's writes enters it as it is", async () => {
  const file = path.join(tempDir(), "a.txt");
  const { fp, path: db } = dbs.open({ tools: [writeFileTool()] });
  const a = await fp.createSession({ userId: "u" });
  await a.append({ role: "user", content: "start" });
  const b = await dbs.open({ path: db, tools: [writeFileTool()] }).fp.getSession(a.id, { userId: "u" });
  const aWrote = latch(),
    bDone = latch();
  // A writes A0 and runs a call; B begins there (its checkpoint among A's writes), writes and fails; then A fails.
  const first = a.atomic(async () => {
    await a.append({ role: "user", content: "A0" });
    await a.invoke("write_file", { path: file, text: "A" });
    aWrote.open();
    await bDone.opened;
    throw new Error("A failed");
  });
  await aWrote.opened;
  await expect(
    b.atomic(async () => {
      await b.append({ role: "user", content: "B0" });
      throw new Error("B failed");
    }),
  ).rejects.toThrow("B failed");
  const madeByB = (await b.info()).currentBranchId;
  bDone.open();
  await expect(first).rejects.toThrow("A failed");
  expect(await contents(a)).toEqual(["start"]);
  expect(readOrNull(file)).toBeNull();

  // B's rollback branch is no part of A's block: it holds A0 as a rollback to B's checkpoint would, and replays A's call.
  const plan = await a.plan({ branchId: madeByB });
  expect(plan.replayed.map((t) => t.tool)).toEqual(["write_file"]);
  const moved = await a.switchBranch(madeByB);
  expect(moved.replayed.map((t) => t.tool)).toEqual(["write_file"]);
  expect(await contents(a)).toEqual(["start", "A0"]);
  expect(fs.readFileSync(file, "utf8")).toBe("A");
});

it("undo after a failed block whose rollback took back another opener's move takes that move back first", async () => {
  const { fp, path: db } = dbs.open();
  const u = await fp.createSession({ userId: "u" });
  await u.append({ role: "user", content: "start" });
  const a = await dbs.open({ path: db }).fp.getSession(u.id, { userId: "u" });
  await u.append({ role: "user", content: "P0" });
  const cp = await u.checkpoint({ name: "cp" });
  await u.append({ role: "user", content: "P1" });
  const root = (await u.info()).currentBranchId;
  // The user's moves before the block: a rollback, a write, a switch back.
  await u.rollback(cp.id);
  await u.append({ role: "user", content: "Q" });
  await u.switchBranch(root);
  const aWrote = latch(),
    uMoved = latch();
  const block = a.atomic(async () => {
    await a.append({ role: "user", content: "A0" });
    aWrote.open();
    await uMoved.opened;
    throw new Error("A failed");
  });
  await aWrote.opened;
  await u.rollback(cp.id); // made while the block runs: its rollback takes it back too
  expect(await contents(u)).toEqual(["start", "P0"]);
  uMoved.open();
  await expect(block).rejects.toThrow("A failed");
  expect(await contents(u)).toEqual(["start", "P0", "P1"]);

  await u.undo(); // takes back the rollback made during the block: the session stays where the block's rollback left it
  expect(await contents(u)).toEqual(["start", "P0", "P1"]);
  await u.undo(); // takes back the switch before the block
  expect(await contents(u)).toEqual(["start", "P0", "Q"]);
});
