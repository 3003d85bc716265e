// A "both" switch to the current branch replaying a workspace-only call that changed no file refuses drift anywhere.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { ConflictError, defineTool } from "../../src/index.js";
import { readOrNull, tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** A "both" rollback stopped by a failing undo, leaving a delete that deleted nothing to replay; `q` then made by hand. */
async function stoppedWithHandFile() {
  const ws = tempDir("forkpoint-self-idle-");
  const at = (rel: string) => path.join(ws, rel);
  const events: string[] = [];
  let refuse = true;
  const write = defineTool<{ path: string; text: string }, { previous: string | null }>({
    name: "write",
    run: ({ path: p, text }) => {
      const previous = readOrNull(p);
      fs.writeFileSync(p, text);
      return { previous };
    },
    undo: ({ args, result }) => {
      if (refuse) throw new Error("undo refused once");
      if (result.previous === null) fs.rmSync(args.path);
      else fs.writeFileSync(args.path, result.previous);
    },
  });
  const remove = defineTool<{ path: string }, { previous: string | null }>({
    name: "remove",
    effects: "workspace",
    run: ({ path: p }, ctx) => {
      events.push(`${ctx.replay ? "replay" : "run"} ${path.basename(p)}`);
      const previous = readOrNull(p);
      fs.rmSync(p, { force: true });
      return { previous };
    },
    undo: ({ args, result }) => {
      if (result.previous !== null) fs.writeFileSync(args.path, result.previous);
    },
  });
  const { fp } = dbs.open({ tools: [write, remove] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("write", { path: at("a"), text: "A" });
  await s.invoke("remove", { path: at("q") }); // nothing to delete: it records no path
  const stopped = await s.rollback(start.id, { scope: "both" }).then(
    () => null,
    (e: ConflictError) => e.code,
  );
  expect(stopped).toBe("UNDO_FAILED");
  expect((await s.toolTrack()).map((t) => [t.tool, t.applied])).toEqual([
    ["write", true],
    ["remove", false],
  ]);
  fs.writeFileSync(at("q"), "by hand");
  refuse = false;
  events.length = 0;
  return { s, at, events, current: (await s.info()).currentBranchId };
}

it("refuses drift in a path the replayed call never recorded", async () => {
  const { s, at, events, current } = await stoppedWithHandFile();
  await expect(s.switchBranch(current, { scope: "both" })).rejects.toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(events).toEqual([]);
  expect(readOrNull(at("q"))).toBe("by hand");
});

it("saves that drift first when forced", async () => {
  const { s, at, events, current } = await stoppedWithHandFile();
  const moved = await s.switchBranch(current, { scope: "both", force: true });
  expect(moved.savedDrift?.files).toEqual(["q"]);
  expect(moved.replayed.map((t) => t.tool)).toEqual(["remove"]);
  expect(events).toEqual(["replay q"]);
  expect(readOrNull(at("q"))).toBe(null);
  // The replay's delete, outside the paths its first run changed, is drift in turn: forced, it is saved too.
  await s.rollback(moved.savedDrift!.checkpointId, { scope: "files", force: true });
  expect(readOrNull(at("q"))).toBe("by hand");
});
