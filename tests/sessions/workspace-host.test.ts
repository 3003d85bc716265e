// A workspace belongs to the host that attached it: on a database several app servers share, another host's calls
// that would read or rewrite its files are refused (WORKSPACE_ON_OTHER_HOST), and the conversation still moves.
import fs from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConflictError } from "../../src/index.js";
import { dumpOf, sqlOn } from "../fixtures/backend.js";
import { makeTempDir, rejectionOf, removeDir, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

describe("a workspace attached on another host", () => {
  it("refuses checkpoints, file moves and disk diffs there, leaves the database unchanged, and moves the conversation", async () => {
    const ws = makeTempDir();
    dirs.push(ws);
    const { fp, path: db } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    fs.writeFileSync(path.join(ws, "plan.md"), "draft 1\n");
    await s.attachWorkspace(ws);
    expect(await sqlOn(db, "SELECT host FROM workspaces")).toEqual([{ host: hostname() }]);
    await s.append({ role: "user", content: "one" });
    const cp = await s.checkpoint({ name: "one" });
    await s.append({ role: "user", content: "two" });
    fs.writeFileSync(path.join(ws, "plan.md"), "draft 2\n");
    const first = await s.checkpoint({ name: "two" });

    // As if app server 2 had attached it: this process is now the other host.
    await sqlOn(db, "UPDATE workspaces SET host = $1", ["app-server-2"]);
    const before = await dumpOf(db);
    for (const call of [
      () => s.checkpoint({ name: "here" }),
      () => s.turn([{ role: "user", content: "three" }], { name: "turn" }),
      () => s.rollback(cp.id, { scope: "files" }),
      () => s.rollback(cp.id, { scope: "both" }),
      () => s.diffFiles(cp.id, "disk"),
    ]) {
      const error = await rejectionOf(call);
      expect(error).toBeInstanceOf(ConflictError);
      expect(error.code).toBe("WORKSPACE_ON_OTHER_HOST");
      expect(error.message).toContain("app-server-2");
    }
    expect(await dumpOf(db)).toEqual(before);
    expect(fs.readFileSync(path.join(ws, "plan.md"), "utf8")).toBe("draft 2\n");
    // Only a move is told it may go with the conversation alone.
    expect((await rejectionOf(() => s.checkpoint({ name: "here" }))).message).not.toContain("scope");
    expect((await rejectionOf(() => s.rollback(cp.id, { scope: "files" }))).message).toContain('scope "conversation"');
    // Two stored snapshots are in the database: they compare from any host.
    expect((await s.diffFiles(cp.id, first.id)).modified).toEqual(["plan.md"]);

    // The conversation alone is not the files': it moves from any host.
    const moved = await s.rollback(cp.id, { scope: "conversation" });
    expect((await s.history()).map((m) => m.content)).toEqual(["one"]);
    expect((await s.info()).currentBranchId).toBe(moved.branch.id);

    // Attached again here, the workspace is this host's.
    await s.attachWorkspace(ws);
    expect(await sqlOn(db, "SELECT host FROM workspaces")).toEqual([{ host: hostname() }]);
    expect((await s.checkpoint({ name: "here" })).name).toBe("here");
  });

  it("leaves an interrupted restore of another host's workspace to that host", async () => {
    const ws = makeTempDir();
    dirs.push(ws);
    const { fp, path: db } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    fs.writeFileSync(path.join(ws, "a.txt"), "a\n");
    await s.attachWorkspace(ws);
    // A restore journal left by a process of the other host (its pid means nothing here).
    await sqlOn(db, "UPDATE workspaces SET host = $1, restoring = $2", [
      "app-server-2",
      JSON.stringify({ manifestId: 1, pid: 999_999, pidStart: "x", pids: [999_999], fromBranchId: "b", fromHead: 0, scope: "files" }),
    ]);
    const report = await fp.recover();
    expect(report.workspaces).toEqual([
      expect.objectContaining({ sessionId: s.id, outcome: "waiting", detail: expect.stringContaining("app-server-2") }),
    ]);
    expect((await sqlOn<{ restoring: string | null }>(db, "SELECT restoring FROM workspaces"))[0]!.restoring).not.toBeNull();
    expect(fs.readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("a\n");
  });
});
