// A "both" switch whose own undo puts a hand edit back (a delete of a file made by hand) that a replay then writes
// over: the move stops there (WORKSPACE_DRIFT), the hand edit on disk, and says so: its undo put it back, no one changed
// it while the move ran. Kept in a checkpoint, the move goes.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** delete_file: removes a file, returning what it held (null: it was not there); undo writes it back. */
const deleteFile = defineTool<{ path: string }, { previous: string | null }>({
  name: "delete_file",
  run: (args) => {
    const previous = readOrNull(args.path);
    fs.rmSync(args.path, { force: true });
    return { previous };
  },
  undo: ({ args, result }) => {
    if (result.previous !== null) fs.writeFileSync(args.path, result.previous);
  },
});

it("a switch whose undo puts a hand edit back that its replay writes over stops naming that undo", async () => {
  const ws = tempDir("forkpoint-both-put-back-");
  const at = path.join(ws, "n.txt");
  fs.writeFileSync(path.join(ws, "a.txt"), "v0\n");
  const { fp } = dbs.open({ tools: [writeFileTool(), deleteFile] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  const b0 = (await s.info()).currentBranchId;
  await s.invoke("write_file", { path: at, text: "by the agent\n" });
  await s.rollback(c0.id);
  fs.writeFileSync(at, "made by hand\n");
  await s.invoke("delete_file", { path: at });
  const [deleted] = (await s.toolTrack()).slice(-1);

  const refused = (await rejectionOf(s.switchBranch(b0, { scope: "both" }))) as { code: string; message: string };
  expect(refused.code).toBe("WORKSPACE_DRIFT");
  expect(refused.message).toContain(`undo of call ${deleted!.id} put back a change made by hand in the workspace ${ws} (n.txt)`);
  expect(refused.message).not.toContain("changed while this move ran");
  expect(readOrNull(at)).toBe("made by hand\n");

  const kept = await s.checkpoint({ name: "kept" });
  const moved = await s.switchBranch(b0, { scope: "both" });
  expect(moved.replayed.map((t) => t.tool)).toEqual(["write_file"]);
  expect(readOrNull(at)).toBe("by the agent\n");
  expect((await s.diffFiles(c0.id, kept.id)).patch).toContain("+made by hand");
});
