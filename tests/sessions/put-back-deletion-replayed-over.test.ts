// An undo that puts back a deletion its call's run found (the file deleted by hand before the call) leaves no content a
// later replay's write could lose: a "both" switch neither refuses nor stops over it, forced or not, and its plan agrees,
// with a call between the stop's makings (a rename away) or without.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool, type ForkpointError } from "../../src/index.js";
import { readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

const put = (p: string, text: string | null) => (text === null ? fs.rmSync(p, { force: true }) : fs.writeFileSync(p, text));
const rename = defineTool<{ from: string; to: string }, { from: string | null; to: string | null }>({
  name: "rename",
  run: ({ from, to }) => {
    const result = { from: readOrNull(from), to: readOrNull(to) };
    if (result.from !== null) fs.renameSync(from, to);
    return result;
  },
  undo: ({ args, result }) => {
    put(args.from, result.from);
    put(args.to, result.to);
  },
});

for (const away of [false, true])
  for (const force of [false, true])
    it(`a switch whose undo puts back a deletion a replay writes over goes through${away ? " after a rename away" : ""}${force ? ", forced" : ""}`, async () => {
      const ws = tempDir("forkpoint-put-back-deletion-");
      const f = (name: string) => path.join(ws, name);
      fs.writeFileSync(f("a.txt"), "init-a");
      fs.writeFileSync(f("b.txt"), "init-b");
      const { fp } = dbs.open({ tools: [writeFileTool(), rename] as never[] });
      const s = await fp.createSession({ userId: "u" });
      await s.attachWorkspace(ws);
      await s.append({ role: "user", content: "go" });
      const c0 = await s.checkpoint({ name: "c0" });
      const main = (await s.info()).currentBranchId;
      await s.invoke("write_file", { path: f("a.txt"), text: "w2" });
      await s.rollback(c0.id, { scope: "both" });
      const other = (await s.info()).currentBranchId;
      // Deleted by hand, then the agent renames b.txt onto it: its undo puts that deletion back.
      fs.rmSync(f("a.txt"));
      await s.invoke("rename", { from: f("b.txt"), to: f("a.txt") });
      await s.checkpoint({ name: "c1" });
      await s.rollback(c0.id, { scope: "both" });
      await s.switchBranch(other, { scope: "both", force: true });
      if (away) await s.invoke("rename", { from: f("a.txt"), to: f("x.txt") });

      const planned = await s.plan({ branchId: main, scope: "both" });
      expect(planned.blocked).toBeUndefined();
      expect(planned.mayStop).toBeUndefined();
      expect(planned.drift).toEqual([]);
      const moved = await s.switchBranch(main, { scope: "both", force });
      expect(moved.replayed.map((t) => t.tool)).toEqual(["write_file"]);
      expect(moved.savedDrift ?? null).toBeNull();
      expect([readOrNull(f("a.txt")), readOrNull(f("b.txt")), readOrNull(f("x.txt"))]).toEqual(["w2", "init-b", null]);
    });

it("a stop over what a recorded call's undo wrote where a deletion was put back names no put-back, and keeps it", async () => {
  const ws = tempDir("forkpoint-put-back-deletion-");
  const at = path.join(ws, "a.txt");
  fs.writeFileSync(at, "init-a");
  const { fp } = dbs.open({ tools: [writeFileTool()] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  const main = (await s.info()).currentBranchId;
  await s.invoke("write_file", { path: at, text: "w2" });
  await s.rollback(c0.id, { scope: "both" });
  // A hand edit, a call made elsewhere over it, the file deleted by hand, then a call that writes it again.
  fs.writeFileSync(at, "r by R");
  await s.recordToolCall({ tool: "write_file", args: { path: at, text: "r by R" }, result: { previous: "by hand" } });
  fs.rmSync(at);
  await s.invoke("write_file", { path: at, text: "x by X" });

  const planned = await s.plan({ branchId: main, scope: "both" });
  expect(planned.mayStop).toContain("a.txt");
  const stopped = await s.switchBranch(main, { scope: "both", force: true }).catch((e: unknown) => e as ForkpointError);
  expect(stopped).toMatchObject({ code: "WORKSPACE_DRIFT" });
  // What is on disk came from the recorded call's undo, not from the put-back deletion: the message does not blame it.
  expect((stopped as ForkpointError).message).toMatch(/changed while this move ran \(a\.txt\)/);
  expect(readOrNull(at)).toBe("by hand");
});
