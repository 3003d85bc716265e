// plan() says a rewind may stop where the move stops: a recorded call's undo puts back what its tool kept (here a hand
// edit forkpoint never saw) and an older call's undo writes that file next, any scope, forced or not.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { readOrNull, tempDir } from "../fixtures/file-tools.js";
import { write } from "../fixtures/put-back-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

for (const scope of ["conversation", "both"] as const)
  for (const force of [false, true])
    it(`a rewind over a recorded call's undo then an older call's: plan says it may stop (${scope}, force ${force})`, async () => {
      const ws = tempDir("forkpoint-plan-may-stop-");
      const a = path.join(ws, "a.txt");
      fs.writeFileSync(a, "a0");
      const { fp } = dbs.open({ tools: [write] });
      const s = await fp.createSession({ userId: "u" });
      await s.attachWorkspace(ws);
      await s.append({ role: "user", content: "start" });
      const c0 = await s.checkpoint({ name: "c0" });
      await s.invoke("write", { path: a, text: "w1" });
      fs.writeFileSync(a, "by hand");
      fs.writeFileSync(a, "r2"); // ran elsewhere, recorded: its undo puts the hand edit back
      await s.recordToolCall({ tool: "write", args: { path: a, text: "r2" }, result: { previous: "by hand" } });

      const planned = await s.plan({ checkpointId: c0.id, scope });
      expect(planned.blocked).toBeUndefined();
      expect(planned.mayStop).toContain("a.txt");
      const refused = await rejectionOf(s.rollback(c0.id, { scope, force }));
      expect(refused).toMatchObject({ code: "WORKSPACE_DRIFT" });
      // Unforced, a "both" move refuses the recorded call's own write first, as drift (the plan lists it).
      if (scope === "both" && !force) expect(planned.drift).toEqual(["a.txt"]);
      else {
        expect(String(refused.message)).toContain("this move's undo of recorded call");
        expect(readOrNull(a)).toBe("by hand");
      }
    });

// Recorded over what the older call left (no hand edit between): the plan cannot tell that from the above, and the
// move goes through.
it("a rewind over a recorded call's undo that puts back the older call's write: plan says it may stop, it does not", async () => {
  const ws = tempDir("forkpoint-plan-may-stop-");
  const a = path.join(ws, "a.txt");
  fs.writeFileSync(a, "a0");
  const { fp } = dbs.open({ tools: [write] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "start" });
  const c0 = await s.checkpoint({ name: "c0" });
  await s.invoke("write", { path: a, text: "w1" });
  fs.writeFileSync(a, "r2");
  await s.recordToolCall({ tool: "write", args: { path: a, text: "r2" }, result: { previous: "w1" } });

  expect((await s.plan({ checkpointId: c0.id, scope: "conversation" })).mayStop).toContain("a.txt");
  await s.rollback(c0.id, { scope: "conversation", force: true });
  expect(readOrNull(a)).toBe("a0");
});

// A recorded call's undo may put a hand edit back where the target has a folder: the restore then stops the move
// there (the hand edit kept). The plan says the move may stop there; its files list keeps it maybe (mayKeep).
it("a switch whose recorded call's undo may put back a file where the target has a folder: plan says it may stop", async () => {
  const ws = tempDir("forkpoint-plan-may-stop-");
  const c = path.join(ws, "c.txt");
  fs.writeFileSync(c, "c0");
  const toFolder = defineTool<{ path: string }, { previous: string | null }>({
    name: "to_folder",
    run: ({ path: p }) => {
      const previous = readOrNull(p);
      fs.rmSync(p, { force: true });
      fs.mkdirSync(p);
      fs.writeFileSync(path.join(p, "inner.txt"), "inner");
      return { previous };
    },
    undo: ({ args, result }) => {
      fs.rmSync(args.path, { recursive: true, force: true });
      if (result.previous !== null) fs.writeFileSync(args.path, result.previous);
    },
  });
  const { fp } = dbs.open({ tools: [write, toFolder] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const c0 = await s.checkpoint({ name: "c0" });
  await s.invoke("to_folder", { path: c });
  await s.checkpoint({ name: "folder" });
  const root = (await s.info()).currentBranchId;
  await s.rollback(c0.id, { scope: "both" });
  fs.writeFileSync(c, "by hand");
  fs.writeFileSync(c, "r2"); // ran elsewhere, recorded: its undo puts the hand edit back
  await s.recordToolCall({ tool: "write", args: { path: c, text: "r2" }, result: { previous: "by hand" } });
  await s.checkpoint({ name: "recorded" });

  const planned = await s.plan({ branchId: root, scope: "both" });
  expect(planned.blocked).toBeUndefined();
  expect(planned.files?.mayKeep).toEqual(["c.txt"]);
  expect(planned.mayStop).toContain("c.txt is a file where c.txt/inner.txt needs a directory");
  const refused = await rejectionOf(s.switchBranch(root, { scope: "both" }));
  expect(refused).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(c)).toBe("by hand");
});
