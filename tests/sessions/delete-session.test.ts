// fp.deleteSession: a session and everything it recorded go in one transaction; other sessions are untouched.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConflictError, NotFoundError, ValidationError } from "../../src/index.js";
import { tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { countRowsOf, dumpOf, sqlOn } from "../fixtures/backend.js";

const dbs = tempDatabases();

describe("deleteSession", () => {
  it("removes the session's branches, entries, tool calls, checkpoints, workspace and events, and nothing else", async () => {
    const dir = tempDir();
    const { fp, path: file } = dbs.open({ tools: [writeFileTool()] });
    const keep = await fp.createSession({ userId: "alice", title: "keep" });
    await keep.append({ role: "user", content: "stay" });
    await keep.checkpoint({ name: "k" });
    const before = await countRowsOf(file);

    const s = await fp.createSession({ userId: "alice", title: "Trip" });
    fs.writeFileSync(path.join(dir, "user.txt"), "mine");
    await s.attachWorkspace(dir);
    await s.append({ role: "user", content: "hi" });
    await s.setState({ step: 1 });
    await s.invoke("write_file", { path: path.join(dir, "a.txt"), text: "A" });
    const cp = await s.checkpoint({ name: "one" });
    await s.append({ role: "assistant", content: "later" });
    const rolled = await s.rollback(cp.id);
    expect(rolled.undone).toHaveLength(0);
    const [first] = await s.history();
    await s.edit(first!.id, { role: "user", content: "hello" });

    await fp.deleteSession(s.id, { userId: "alice" });
    await expect(fp.getSession(s.id, { userId: "alice" })).rejects.toBeInstanceOf(NotFoundError);
    const { items } = await fp.listSessions({ userId: "alice" });
    expect(items.map((i) => i.id)).toEqual([keep.id]);
    expect((await fp.listCheckpoints({ userId: "alice" })).items.map((c) => c.name)).toEqual(["k"]);
    // Shared stores (state documents, file contents) are prune's; every per-session table is back where it was.
    const after = await countRowsOf(file);
    for (const table of [
      "sessions",
      "branches",
      "entries",
      "checkpoints",
      "tool_results",
      "applied",
      "events",
      "moves",
      "move_steps",
      "workspaces",
      "checkpoint_files",
    ]) {
      expect([table, after[table]]).toEqual([table, before[table]]);
    }
    expect((await keep.history()).map((m) => m.content)).toEqual(["stay"]);
    expect(await fp.verify()).toMatchObject({ ok: true, problems: [] });
    const pruned = await fp.prune();
    expect(pruned.snapshots).toBeGreaterThan(0);
    expect(pruned.files).toBeGreaterThan(0);
    // The user's files are theirs: deleting the session does not touch the directory.
    expect(fs.readFileSync(path.join(dir, "user.txt"), "utf8")).toBe("mine");
  });

  it("is scoped to the owner, validates its input and leaves the database unchanged when refused", async () => {
    const { fp, path: file } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "hi" });
    const before = await dumpOf(file);
    expect(await rejectionOf(fp.deleteSession(s.id, { userId: "bob" }))).toBeInstanceOf(NotFoundError);
    expect(await rejectionOf(fp.deleteSession("ses_ZZZZZZZZZZZZZZZZ", { userId: "alice" }))).toBeInstanceOf(NotFoundError);
    expect(await rejectionOf(fp.deleteSession("", { userId: "alice" }))).toBeInstanceOf(ValidationError);
    expect(await rejectionOf(fp.deleteSession(s.id, {} as { userId: string }))).toBeInstanceOf(ValidationError);
    expect(await dumpOf(file)).toEqual(before);
  });

  it("refuses a session with a move still journaled (another process's, or a crashed one)", async () => {
    const { fp, path: file } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const cp = await s.checkpoint();
    await sqlOn(
      file,
      `INSERT INTO moves (id, session_id, kind, spec, status, pid, created_at) VALUES ('mv_x', $1, 'rollback', $2, 'running', 1, 0)`,
      [s.id, JSON.stringify({ newBranch: { forkCheckpointId: cp.id } })],
    );
    const error = await rejectionOf(fp.deleteSession(s.id, { userId: "alice" }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.code).toBe("MOVE_IN_PROGRESS");
    expect((await s.info()).id).toBe(s.id);
  });
});
