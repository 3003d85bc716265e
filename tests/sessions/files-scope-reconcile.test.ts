// A move with scope "files" keeps the tool track in step with the files it restores: a call whose run changed
// workspace files is applied exactly when the restored snapshot holds it; a call that changed none (an effect outside
// the workspace) and a call without recorded paths (an older database's) stay as they were. The plan is journaled
// with the restore: recovery after a crash finishes the files and the track together.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint, SessionHandle } from "../../src/index.js";
import { appendLineTool, readOrNull, writeFileTool } from "../fixtures/file-tools.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint, sqlOn } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let dbFile: string;
let fp: Forkpoint;
const file = (rel: string) => path.join(ws, rel);
const applied = async (s: SessionHandle, tool: string, branchId?: string) =>
  (await s.toolTrack(branchId === undefined ? {} : { branchId })).filter((t) => t.tool === tool).map((t) => t.applied);

beforeEach(() => {
  dir = makeTempDir("forkpoint-files-reconcile-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  dbFile = path.join(dir, "forkpoint.db");
  fp = openForkpoint({ path: dbFile, tools: [appendLineTool(), writeFileTool()] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

it("a call made after the snapshot is unapplied with its files, and a later move replays it once", async () => {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("append_line", { path: file("log"), line: "L1" });
  const moved = await s.rollback(start.id, { scope: "files" });
  expect(moved.undone).toEqual([]);
  expect(readOrNull(file("log"))).toBeNull();
  expect(await applied(s, "append_line")).toEqual([false]);

  // The conversation is where it was: moving to its head brings the call back by replay, once.
  const replayed = await s.switchBranch((await s.info()).currentBranchId, { scope: "conversation" });
  expect(replayed.replayed.map((t) => t.tool)).toEqual(["append_line"]);
  expect(readOrNull(file("log"))).toBe("L1\n");
  expect(await applied(s, "append_line")).toEqual([true]);
});

it("a call that changed no workspace file (an effect outside it) stays applied", async () => {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("write_file", { path: path.join(dir, "outside.txt"), text: "sent" });
  await s.invoke("append_line", { path: file("log"), line: "L1" });
  await s.rollback(start.id, { scope: "files" });
  expect(await applied(s, "write_file")).toEqual([true]);
  expect(await applied(s, "append_line")).toEqual([false]);
  expect(fs.readFileSync(path.join(dir, "outside.txt"), "utf8")).toBe("sent");
});

it("undo and redo of an earlier move after a files-only restore: each line once", async () => {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("append_line", { path: file("log"), line: "L1" });
  const withL1 = await s.checkpoint({ name: "L1" });
  await s.rollback(start.id, { scope: "both" });
  await s.rollback(withL1.id, { scope: "files" });
  expect(readOrNull(file("log"))).toBe("L1\n");
  expect(await applied(s, "append_line", withL1.branchId)).toEqual([true]);

  // Undo goes back where the "both" rollback left from: the line is already there, so nothing replays.
  const undone = await s.undo();
  expect(undone.replayed).toEqual([]);
  expect(readOrNull(file("log"))).toBe("L1\n");
  // Redo leaves the line's branch again: it is undone, on the file it wrote.
  const redone = await s.redo();
  expect(redone.undone.map((t) => t.tool)).toEqual(["append_line"]);
  expect(readOrNull(file("log"))).toBe("");
});

it("without recorded paths (an older database), the track stays as it was", async () => {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("append_line", { path: file("log"), line: "L1" });
  await sqlOn(dbFile, `DELETE FROM call_paths`);
  await s.rollback(start.id, { scope: "files" });
  expect(readOrNull(file("log"))).toBeNull();
  expect(await applied(s, "append_line")).toEqual([true]);
});

it("a files-only restore interrupted by a crash: recovery finishes the files and the track together", async () => {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("append_line", { path: file("log"), line: "L1" });
  const l1 = (await s.toolTrack()).find((t) => t.tool === "append_line")!;
  // The journal as a files-only rollback to `start` writes it, left by a process that died before any file moved.
  const one = async (sql: string, param: string) => Object.values((await sqlOn(dbFile, sql, [param]))[0]!)[0];
  const branchId = (await s.info()).currentBranchId;
  const journal = {
    manifestId: await one("SELECT manifest_id FROM checkpoint_files WHERE checkpoint_id = $1", start.id),
    fromManifestId: await one("SELECT manifest_id FROM workspaces WHERE session_id = $1", s.id),
    scope: "files",
    fromBranchId: branchId,
    fromHead: l1.position,
    pid: spawnSync(process.execPath, ["-e", ""]).pid!,
    pidStart: null,
    pids: [] as number[],
    track: { mark: [], unmark: [l1.id] },
  };
  journal.pids.push(journal.pid);
  await sqlOn(dbFile, "UPDATE workspaces SET restoring = $1 WHERE session_id = $2", [JSON.stringify(journal), s.id]);

  const report = await fp.recover();
  expect(report.workspaces.map((w) => w.outcome)).toEqual(["completed"]);
  expect(readOrNull(file("log"))).toBeNull();
  expect(await applied(s, "append_line")).toEqual([false]);
  await s.switchBranch(branchId, { scope: "conversation" });
  expect(readOrNull(file("log"))).toBe("L1\n");
});
