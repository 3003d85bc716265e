// A call left applied for want of its tool stops the compensation: the calls applied before it stay applied under it.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { appendLineTool, readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

it.each(["conversation", "both"] as const)("a %s move leaving an unregistered call undoes none applied before it", async (scope) => {
  const ws = tempDir("forkpoint-unregistered-under-");
  const file = path.join(ws, "b.txt");
  const { fp, path: db } = dbs.open({ tools: [writeFileTool(), appendLineTool()] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("write_file", { path: file, text: "W\n" });
  await s.invoke("append_line", { path: file, line: "A" });

  // An opener without append_line leaves it applied: the write under it stays applied too, its file as it is.
  const partial = dbs.open({ path: db, tools: [writeFileTool()] as never[] }).fp;
  const h = await partial.getSession(s.id, { userId: "u" });
  const planned = await h.plan({ checkpointId: start.id });
  expect([planned.undone, planned.skipped.map((t) => t.tool), planned.unregistered.map((t) => t.tool)]).toEqual([
    [],
    ["write_file"],
    ["append_line"],
  ]);
  const moved = await h.rollback(start.id, { scope, unregistered: "leave" });
  expect([moved.undone, moved.skipped.map((t) => t.tool), moved.unregistered.map((t) => t.tool)]).toEqual([
    [],
    ["write_file"],
    ["append_line"],
  ]);
  if (scope === "both") expect(moved.files?.kept).toEqual(["b.txt"]);
  expect(readOrNull(file)).toBe("W\nA\n");
  expect((await s.toolTrack({ branchId: start.branchId })).map((t) => t.applied)).toEqual([true, true]);

  // An opener with every tool then undoes both, last first.
  const full = await s.rollback(start.id, { scope });
  expect(full.undone.map((t) => t.tool)).toEqual(["append_line", "write_file"]);
  expect(fs.existsSync(file)).toBe(false);
});
