// A "both" switch to the current branch with calls to run does not write over unsaved hand edits: refused, or saved first when forced.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { ConflictError, defineTool } from "../../src/index.js";
import { readOrNull, tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** A "both" rollback stopped by a failing undo, `b` undone (its write to replay), and `b` then written by hand. */
async function stoppedWithHandEdit() {
  const ws = tempDir("forkpoint-self-drift-");
  const at = (rel: string) => path.join(ws, rel);
  const events: string[] = [];
  let refuse = true;
  const write = defineTool<{ path: string; text: string }, { previous: string | null }>({
    name: "write",
    run: ({ path: p, text }, ctx) => {
      events.push(`${ctx.replay ? "replay" : "run"} ${path.basename(p)}`);
      const previous = readOrNull(p);
      fs.writeFileSync(p, text);
      return { previous };
    },
    undo: ({ args, result }) => {
      if (path.basename(args.path) === "a" && refuse) throw new Error("undo refused once");
      events.push(`undo ${path.basename(args.path)}`);
      if (result.previous === null) fs.rmSync(args.path);
      else fs.writeFileSync(args.path, result.previous);
    },
  });
  const { fp } = dbs.open({ tools: [write] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("write", { path: at("a"), text: "A" });
  await s.append({ role: "user", content: "more" });
  await s.invoke("write", { path: at("b"), text: "B" });
  const current = (await s.info()).currentBranchId;
  const stopped = await s.rollback(start.id, { scope: "both" }).then(
    () => null,
    (e: ConflictError) => e.code,
  );
  expect(stopped).toBe("UNDO_FAILED");
  expect([readOrNull(at("a")), readOrNull(at("b"))]).toEqual(["A", null]);
  fs.writeFileSync(at("b"), "by hand");
  refuse = false;
  events.length = 0;
  return { s, at, events, current };
}

it("a both switch to the current branch refuses drift its replays would write over", async () => {
  const { s, at, events, current } = await stoppedWithHandEdit();
  // Planned as such: no file restored, the write replayed, and the drift it would write over named.
  const planned = await s.plan({ branchId: current, scope: "both" });
  expect(planned).toMatchObject({ files: { written: [], deleted: [] }, drift: ["b"] });
  expect(planned.replayed.map((t) => t.tool)).toEqual(["write"]);
  const refused = await s.switchBranch(current, { scope: "both" }).then(
    () => null,
    (e: ConflictError) => e.code,
  );
  expect(refused).toBe("WORKSPACE_DRIFT");
  expect(events).toEqual([]);
  expect(readOrNull(at("b"))).toBe("by hand");
  expect((await s.listCheckpoints()).items.map((c) => c.name)).toEqual(["start"]);

  // Saved by hand, the switch replays the write over it.
  const saved = await s.checkpoint({ name: "hand" });
  expect((await s.plan({ branchId: current, scope: "both" })).drift).toEqual([]);
  const moved = await s.switchBranch(current, { scope: "both" });
  expect(moved.replayed.map((t) => t.tool)).toEqual(["write"]);
  expect(events).toEqual(["replay b"]);
  expect(readOrNull(at("b"))).toBe("B");
  await s.rollback(saved.id, { scope: "files" });
  expect(readOrNull(at("b"))).toBe("by hand");
});

it("a forced both switch to the current branch saves the drift before its replays write over it", async () => {
  const { s, at, events, current } = await stoppedWithHandEdit();
  const moved = await s.switchBranch(current, { scope: "both", force: true });
  expect(moved.savedDrift?.files).toEqual(["b"]);
  expect(moved.replayed.map((t) => t.tool)).toEqual(["write"]);
  expect(events).toEqual(["replay b"]);
  expect(readOrNull(at("b"))).toBe("B");
  await s.rollback(moved.savedDrift!.checkpointId, { scope: "files" });
  expect(readOrNull(at("b"))).toBe("by hand");
});

it("a both switch to the current branch with nothing to run leaves drift as it is", async () => {
  const { s, at, events, current } = await stoppedWithHandEdit();
  // A "conversation" switch's replay would write over the hand edit too: refused (conversation-rewind-drift.test.ts).
  expect(await s.switchBranch(current).catch((e: ConflictError) => e.code)).toBe("WORKSPACE_DRIFT");
  fs.rmSync(at("b"));
  await s.switchBranch(current);
  expect(events).toEqual(["replay b"]);
  fs.writeFileSync(at("b"), "by hand again");
  events.length = 0;
  for (const force of [false, true]) {
    const moved = await s.switchBranch(current, { scope: "both", force });
    expect([moved.undone, moved.replayed, moved.savedDrift]).toEqual([[], [], undefined]);
  }
  expect(events).toEqual([]);
  expect(readOrNull(at("b"))).toBe("by hand again");
});

it("a both switch to the current branch leaves drift its calls do not write as it is, unsaved", async () => {
  const { s, at, events, current } = await stoppedWithHandEdit();
  fs.writeFileSync(at("b"), "B");
  fs.writeFileSync(at("h"), "elsewhere by hand");
  await expect(s.switchBranch(current, { scope: "both" })).rejects.toMatchObject({ code: "WORKSPACE_DRIFT" });
  fs.rmSync(at("b"));
  const moved = await s.switchBranch(current, { scope: "both", force: true });
  expect([moved.replayed.map((t) => t.tool), moved.savedDrift]).toEqual([["write"], undefined]);
  expect(events).toEqual(["replay b"]);
  expect([readOrNull(at("b")), readOrNull(at("h"))]).toEqual(["B", "elsewhere by hand"]);
  expect((await s.listCheckpoints()).items.map((c) => c.name)).toEqual(["start"]);
});
