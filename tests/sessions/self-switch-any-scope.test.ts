// A switch to the current branch does nothing whatever its scope: no file moves, no tool runs, nothing for undo.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { ConflictError, defineTool } from "../../src/index.js";
import { readOrNull, tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

async function attached() {
  const ws = tempDir("forkpoint-self-switch-");
  const events: string[] = [];
  const write = defineTool<{ path: string; text: string }, { previous: string | null }>({
    name: "write",
    run: ({ path: p, text }) => {
      events.push(`run ${path.basename(p)}`);
      const previous = readOrNull(p);
      fs.writeFileSync(p, text);
      return { previous };
    },
    undo: ({ args, result }) => {
      events.push(`undo ${path.basename(args.path)}`);
      if (result.previous === null) fs.rmSync(args.path);
      else fs.writeFileSync(args.path, result.previous);
    },
  });
  const email = defineTool<{ to: string }, null>({
    name: "send_email",
    run: ({ to }) => {
      events.push(`send ${to}`);
      return null;
    },
    undo: ({ args }) => {
      events.push(`recall ${args.to}`);
    },
  });
  const { fp } = dbs.open({ tools: [write, email] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  return { s, events, at: (rel: string) => path.join(ws, rel) };
}

it.each(["both", "files"] as const)("a %s switch to the current branch keeps the calls made since its snapshot", async (scope) => {
  const { s, events, at } = await attached();
  await s.append({ role: "user", content: "go" });
  await s.checkpoint({ name: "start" });
  await s.invoke("write", { path: at("a.txt"), text: "1" });
  await s.invoke("send_email", { to: "bob" });
  await s.invoke("write", { path: at("a.txt"), text: "2" });
  const current = (await s.info()).currentBranchId;
  const conversation = await s.switchBranch(current);
  events.length = 0;

  const moved = await s.switchBranch(current, { scope });
  expect(moved).toEqual(conversation);
  expect(events).toEqual([]);
  expect(readOrNull(at("a.txt"))).toBe("2");
  expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true, true, true]);
  expect((await rejectionOf(s.undo())).code).toBe("NOTHING_TO_UNDO");
});

it("a switch to the current branch before any checkpoint is not refused for want of a snapshot", async () => {
  const { s, at } = await attached();
  fs.writeFileSync(at("a.txt"), "a");
  const current = (await s.info()).currentBranchId;
  for (const scope of ["both", "files"] as const) {
    const moved = await s.switchBranch(current, { scope });
    expect(moved.branch.id).toBe(current);
    expect(moved.files).toBeUndefined();
  }
  expect(readOrNull(at("a.txt"))).toBe("a");
});

it("a both switch to the current branch leaves out a call a files-only rewind set aside; a conversation one replays it", async () => {
  const { s, events, at } = await attached();
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("write", { path: at("a.txt"), text: "1" });
  const current = (await s.info()).currentBranchId;
  await s.rollback(start.id, { scope: "files" });
  expect(readOrNull(at("a.txt"))).toBeNull();
  events.length = 0;

  for (const scope of ["both", "files"] as const) {
    const moved = await s.switchBranch(current, { scope });
    expect([moved.undone, moved.replayed, moved.files]).toEqual([[], [], undefined]);
  }
  expect(events).toEqual([]);
  expect(readOrNull(at("a.txt"))).toBeNull();
  const replayed = await s.switchBranch(current);
  expect(replayed.replayed.map((t) => t.tool)).toEqual(["write"]);
  expect(readOrNull(at("a.txt"))).toBe("1");
});

async function rejectionOf(p: Promise<unknown>): Promise<ConflictError> {
  try {
    await p;
  } catch (error) {
    expect(error).toBeInstanceOf(ConflictError);
    return error as ConflictError;
  }
  throw new Error("not refused");
}
