// A stopped rewind called again as "both" (same target) keeps the hand edit the stopped one's undo put back, listed
// in `files.kept`, as an uninterrupted "both" rewind does: whatever the stopped one's scope, forced or not, and with
// other drift saved first.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool, type Forkpoint } from "../../src/index.js";
import { readOrNull, tempDir, type WriteArgs, type WriteResult } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** The tools whose undo fails now. */
const broken = new Set<string>();

/** A file writer named `name` whose undo fails while `broken` holds its name. */
const breakable = (name: string) =>
  defineTool<WriteArgs, WriteResult>({
    name,
    effects: "workspace",
    run: (args) => {
      const previous = readOrNull(args.path);
      fs.writeFileSync(args.path, args.text);
      return { previous };
    },
    undo: ({ args, result }) => {
      if (broken.has(name)) throw new Error("broken");
      if (result.previous === null) fs.rmSync(args.path, { force: true });
      else fs.writeFileSync(args.path, result.previous);
    },
  });

/** Runs `move` while the undos of `tools` fail. */
async function breaking<T>(tools: string[], move: () => Promise<T>): Promise<T> {
  for (const tool of tools) broken.add(tool);
  try {
    return await move();
  } finally {
    broken.clear();
  }
}

/** A session on a workspace holding `o`, checkpointed; then d and e written, d edited by hand and written again. */
async function started() {
  const ws = tempDir("forkpoint-stopped-both-");
  const file = (rel: string) => path.join(ws, rel);
  fs.writeFileSync(file("o"), "o");
  const fp: Forkpoint = dbs.open({ tools: [breakable("flaky_write"), breakable("write_file")] as never[] }).fp;
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("flaky_write", { path: file("d"), text: "w" });
  await s.invoke("flaky_write", { path: file("e"), text: "e" });
  fs.writeFileSync(file("d"), "by hand");
  await s.invoke("write_file", { path: file("d"), text: "w" });
  return { s, start, file };
}

for (const first of ["conversation", "both"] as const)
  for (const force of [false, true])
    it(`a stopped ${first} rewind called again as "both"${force ? " with force" : ""} keeps the hand edit put back`, async () => {
      const { s, start, file } = await started();
      // write_file's undo puts the hand edit back, then flaky_write's undo fails: the move stops.
      const stop = await breaking(["flaky_write"], () => rejectionOf(s.rollback(start.id, { scope: first })));
      expect(stop).toMatchObject({ code: "UNDO_FAILED" });
      expect(readOrNull(file("d"))).toBe("by hand");
      const moved = await s.rollback(start.id, { scope: "both", force });
      expect(moved.undone.map((t) => t.tool)).toEqual(["flaky_write", "flaky_write"]);
      expect(readOrNull(file("d"))).toBe("by hand");
      expect(readOrNull(file("e"))).toBeNull();
      expect(moved.files?.kept).toEqual(["d"]);
      expect(moved.savedDrift).toBeUndefined();
    });

it('a stopped rewind called again as "both" refuses other drift, and saves it when forced, keeping the hand edit', async () => {
  const { s, start, file } = await started();
  const stop = await breaking(["flaky_write"], () => rejectionOf(s.rollback(start.id, { scope: "conversation" })));
  expect(stop).toMatchObject({ code: "UNDO_FAILED" });
  // A save by hand elsewhere between the stop and the second call: drift, refused, and named without the hand edit.
  fs.writeFileSync(file("o"), "o by hand");
  const refused = await rejectionOf(s.rollback(start.id, { scope: "both" }));
  expect(refused).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect((refused as Error).message).toContain("(o)");
  const moved = await s.rollback(start.id, { scope: "both", force: true });
  expect(moved.savedDrift?.files).toEqual(["o"]);
  // The saved checkpoint holds the hand edit as it is: the restore still leaves it, as the move held it.
  expect(readOrNull(file("d"))).toBe("by hand");
  expect(readOrNull(file("e"))).toBeNull();
  expect(readOrNull(file("o"))).toBe("o");
  expect(moved.files?.kept).toEqual(["d"]);
});

for (const force of [false, true])
  it(`a stopped "both" switch to the current branch called again${force ? " with force, other drift saved" : ""} keeps the hand edit put back`, async () => {
    const { s, start, file } = await started();
    // A rewind whose undos all fail ("continue"): the calls stay applied off the branch it lands on.
    await breaking(["flaky_write", "write_file"], () => s.rollback(start.id, { scope: "conversation", onUndoError: "continue" }));
    const branch = (await s.info()).currentBranchId;
    // A switch to that branch undoes them: write_file's undo puts the hand edit back, then flaky_write's fails.
    const stop = await breaking(["flaky_write"], () => rejectionOf(s.switchBranch(branch, { scope: "both" })));
    expect(stop).toMatchObject({ code: "UNDO_FAILED" });
    expect(readOrNull(file("d"))).toBe("by hand");
    // Forced: a save by hand of a file its calls write is saved first (its checkpoint moves the branch's head on).
    if (force) fs.writeFileSync(file("e"), "e by hand");
    const moved = await s.switchBranch(branch, { scope: "both", force });
    expect(moved.undone.map((t) => t.tool)).toEqual(["flaky_write", "flaky_write"]);
    expect(readOrNull(file("d"))).toBe("by hand");
    expect(readOrNull(file("e"))).toBeNull();
    expect(moved.savedDrift?.files).toEqual(force ? ["e"] : undefined);
  });
