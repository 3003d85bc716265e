// fp.deleteUser: every session of one user, and every row that hangs off them in any table, gone a batch at a time;
// other users' rows untouched; bad input refused with nothing changed; an interrupted call finished by running it again.
import fs from "node:fs";
import path from "node:path";
import type { AgentInputItem } from "@openai/agents";
import { describe, expect, it } from "vitest";
import { AbortedError, ConflictError, ValidationError, type Forkpoint, type Progress } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { ForkpointSession } from "../../src/openai-agents/index.js";
import { DELETE_USER_BATCH } from "../../src/sessions/delete-user.js";
import { dumpOf, onPostgres, sqlOn } from "../fixtures/backend.js";
import { tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { startWorker } from "../fixtures/workers.js";
import { echoGraph, say, texts } from "../langgraph/helpers.js";
import { rejectionOf, tempDatabases, type Dump } from "../helpers.js";

const dbs = tempDatabases();

/** Tables shared by every session, content-addressed: what no session owns is prune's to reclaim, not deleteUser's. */
const SHARED = new Set(["state_snapshots", "file_blobs", "file_packs", "file_trees", "file_manifests"]);
/** A session handed off from one of the user's sessions keeps its copy, and the pointer to where it came from. */
const ORIGIN_FIELDS = new Set(["origin_session_id", "origin_checkpoint_id"]);

/** The ids of `userId`'s sessions, branches, entries, checkpoints and moves, read from a dump, with the user id itself. */
function idsOf(dump: Dump, userId: string): Set<string> {
  const rows = (table: string) => (dump[table] ?? []) as Record<string, unknown>[];
  const sessions = new Set(
    rows("sessions")
      .filter((r) => r.user_id === userId)
      .map((r) => r.id as string),
  );
  const branches = new Set(
    rows("branches")
      .filter((r) => sessions.has(r.session_id as string))
      .map((r) => r.id as string),
  );
  const entries = rows("entries")
    .filter((r) => branches.has(r.branch_id as string))
    .map((r) => r.id as string);
  const checkpoints = rows("checkpoints")
    .filter((r) => sessions.has(r.session_id as string))
    .map((r) => r.id as string);
  const moves = rows("moves")
    .filter((r) => sessions.has(r.session_id as string))
    .map((r) => r.id as string);
  return new Set([userId, ...sessions, ...branches, ...entries, ...checkpoints, ...moves]);
}

/** Whether a row names any of `ids` (outside the origin pointers of a session handed off to someone else). */
function names(row: Record<string, unknown>, ids: Set<string>): boolean {
  return Object.entries(row).some(
    ([key, value]) => !ORIGIN_FIELDS.has(key) && typeof value === "string" && [...ids].some((id) => value.includes(id)),
  );
}

/** The dump without the rows that name `ids` (and without the shared tables' rows, which are compared apart). */
function withoutRowsNaming(dump: Dump, ids: Set<string>): Dump {
  return Object.fromEntries(
    Object.entries(dump).map(([table, rows]) => [table, (rows as Record<string, unknown>[]).filter((r) => !names(r, ids))]),
  );
}

async function sessionsOf(fp: Forkpoint, userId: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await fp.listSessions({ userId, limit: 100, cursor });
    ids.push(...page.items.map((i) => i.id));
    cursor = page.nextCursor;
  } while (cursor !== null);
  return ids;
}

describe("deleteUser", () => {
  it("removes every row that names the user's sessions in any table (LangGraph, OpenAI Agents, workspaces included), and no other", async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, "notes.txt"), "mine");
    const { fp, path: file } = dbs.open({ tools: [writeFileTool()] });
    const bobs = await fp.createSession({ userId: "bob", title: "bob's" });
    await bobs.append({ role: "user", content: "bob stays" });
    await bobs.checkpoint({ name: "b", metadata: { agent: "x" } });

    // Alice: a chat with tools, moves, request ids, checkpoints with metadata, retention and a workspace...
    const chat = await fp.createSession({ userId: "alice", title: "trip" });
    await chat.attachWorkspace(dir);
    const [question] = await chat.append({ role: "user", content: "hi" }, { requestId: "r-1" });
    await chat.setState({ step: 1 });
    await chat.invoke("write_file", { path: path.join(dir, "a.txt"), text: "A" });
    const cp = await chat.checkpoint({ name: "one", metadata: { agent: "planner" } });
    await chat.append({ role: "assistant", content: "later" });
    await chat.setRetention({ keepLast: 5 });
    await chat.rollback(cp.id);
    await chat.edit(question!.id, { content: "hello" });
    await chat.switchBranch((await chat.branches())[0]!.id);
    // ...a call a files-only rollback set aside...
    const beforeB = await chat.checkpoint({ name: "before b" });
    await chat.invoke("write_file", { path: path.join(dir, "b.txt"), text: "B" });
    await chat.rollback(beforeB.id, { scope: "files" });
    // ...a handoff to bob (his copy stays), a clone, an import...
    const handed = await chat.handoff(cp.id, { userId: "bob", title: "handed over" });
    await fp.clone(chat.id, { userId: "alice" });
    const { fp: elsewhere } = dbs.open();
    const exported = await elsewhere.createSession({ userId: "x" });
    await exported.append({ role: "user", content: "imported" });
    await exported.recordToolCall({ tool: "t", args: {}, result: null });
    await fp.importSession(await elsewhere.exportSession(exported.id, { userId: "x" }), { userId: "alice" });
    // ...a LangGraph thread and an OpenAI Agents session.
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = echoGraph(saver);
    const thread = { configurable: { thread_id: "t1" } };
    await graph.invoke(say("graph hi"), thread);
    const agents = new ForkpointSession(await fp.createSession({ userId: "alice", title: "agent" }));
    const item: AgentInputItem = { type: "message", role: "user", content: "agent hi" };
    await agents.applyHistoryTransaction({ operationId: "op-1", transaction: { type: "append_items", items: [item] } });

    // What only lives while something runs: a guarded block's hold on a checkpoint, and another process's running call.
    const [call] = await chat.toolTrack();
    await sqlOn(file, `INSERT INTO checkpoint_holds (checkpoint_id, session_id, until) VALUES ($1, $2, $3)`, [cp.id, chat.id, 8.64e15]);
    await sqlOn(
      file,
      onPostgres
        ? `INSERT INTO running_calls (entry_id, session_id, pid, lease_until) VALUES ($1, $2, $3, 8.64e15)`
        : `INSERT INTO running_calls (entry_id, session_id, pid) VALUES ($1, $2, $3)`,
      [call!.id, chat.id, 2 ** 22 + 1],
    );

    const before = await dumpOf(file);
    const alice = idsOf(before, "alice");
    // Every table a session's rows live in holds some of alice's: a table added later must be deleted here too.
    const named = Object.keys(before).filter((table) => (before[table] as Record<string, unknown>[]).some((r) => names(r, alice)));
    expect(named.sort()).toEqual(
      Object.keys(before)
        .filter((table) => !SHARED.has(table) && !table.includes("migrations"))
        .sort(),
    );
    const count = (await sessionsOf(fp, "alice")).length;
    expect(count).toBeGreaterThanOrEqual(4);
    const progress: Progress[] = [];
    expect(await fp.deleteUser("alice", { onProgress: (p) => progress.push(p) })).toEqual({ sessions: count });
    expect(progress.at(0)).toEqual({ done: 0, total: count });
    expect(progress.at(-1)).toEqual({ done: count, total: count });

    const after = await dumpOf(file);
    // Every table that names one of alice's sessions, branches, entries, checkpoints or moves lost those rows...
    expect(withoutRowsNaming(after, alice)).toEqual(after);
    // ...and only those: bob's rows (his handed-off copy included) are exactly as they were, and so are shared contents.
    expect(after).toEqual(withoutRowsNaming(before, alice));
    for (const table of SHARED) expect([table, after[table]]).toEqual([table, before[table]]);
    expect(Object.values(before).flat().length).toBeGreaterThan(Object.values(after).flat().length);

    expect(await sessionsOf(fp, "alice")).toEqual([]);
    expect((await fp.listUsers()).items.map((u) => u.userId)).toEqual(["bob"]);
    expect((await handed.history()).map((m) => m.content)).toEqual(["hi"]);
    expect(await fp.verify()).toMatchObject({ ok: true, problems: [] });
    // The LangGraph thread is gone for the saver that wrote it, and starts afresh.
    expect(await saver.getTuple(thread)).toBeUndefined();
    expect(texts((await graph.invoke(say("again"), thread)).messages)).toEqual(["human:again", "ai:echo: again"]);
    // The user's files are theirs: deleting the sessions does not touch the directory.
    expect(fs.readFileSync(path.join(dir, "notes.txt"), "utf8")).toBe("mine");
    // Run again: nothing left, nothing to do.
    expect(await fp.deleteUser("alice")).toEqual({ sessions: 1 });
    expect(await fp.deleteUser("alice")).toEqual({ sessions: 0 });
  });

  it("refuses bad input with a ValidationError and changes nothing", async () => {
    const { fp, path: file } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "hi" });
    const before = await dumpOf(file);
    for (const [userId, options, field, code] of [
      ["", undefined, "userId", "VALIDATION_ERROR"],
      ["   ", undefined, "userId", "VALIDATION_ERROR"],
      [42, undefined, "userId", "VALIDATION_ERROR"],
      [undefined, undefined, "userId", "VALIDATION_ERROR"],
      ["x".repeat(10_000), undefined, "userId", "VALIDATION_ERROR"],
      ["al\uD800ice", undefined, "userId", "MALFORMED_TEXT"],
      ["alice", { onProgress: "yes" }, "onProgress", "VALIDATION_ERROR"],
      ["alice", { signal: {} }, "signal", "VALIDATION_ERROR"],
      ["alice", { batch: 5 }, "options", "VALIDATION_ERROR"],
      ["alice", null, "options", "VALIDATION_ERROR"],
    ] as const) {
      const error = await rejectionOf(fp.deleteUser(userId as string, options as never));
      expect(error, String(userId)).toBeInstanceOf(ValidationError);
      expect([error.field, error.code]).toEqual([field, code]);
    }
    const aborted = new AbortController();
    aborted.abort();
    expect(await rejectionOf(fp.deleteUser("alice", { signal: aborted.signal }))).toBeInstanceOf(AbortedError);
    expect(await dumpOf(file)).toEqual(before);
    // An unknown user has nothing to delete: not an error, so a rerun after success is safe.
    expect(await fp.deleteUser("nobody")).toEqual({ sessions: 0 });
    expect(await dumpOf(file)).toEqual(before);
  });

  it(`commits a batch of at most ${DELETE_USER_BATCH} sessions at a time: an abort keeps what is done, a rerun finishes`, async () => {
    const { fp } = dbs.open();
    const total = DELETE_USER_BATCH * 2 + 3;
    for (let i = 0; i < total; i++)
      await (await fp.createSession({ userId: "alice", title: `s${i}` })).append({ role: "user", content: `${i}` });
    const keep = await fp.createSession({ userId: "bob" });
    const stop = new AbortController();
    const seen: Progress[] = [];
    const error = await rejectionOf(
      fp.deleteUser("alice", {
        signal: stop.signal,
        onProgress: (p) => {
          seen.push(p);
          if (p.done > 0) stop.abort();
        },
      }),
    );
    expect(error).toBeInstanceOf(AbortedError);
    // One batch committed (the newest sessions first), then the call stopped before the next.
    expect(seen).toEqual([
      { done: 0, total },
      { done: DELETE_USER_BATCH, total },
    ]);
    const left = await sessionsOf(fp, "alice");
    expect(left).toHaveLength(total - DELETE_USER_BATCH);
    const titles = await Promise.all(left.map(async (id) => (await (await fp.getSession(id, { userId: "alice" })).info()).title));
    expect(titles).toEqual(Array.from({ length: total - DELETE_USER_BATCH }, (_, i) => `s${total - DELETE_USER_BATCH - 1 - i}`));

    const rest: Progress[] = [];
    expect(await fp.deleteUser("alice", { onProgress: (p) => rest.push(p) })).toEqual({ sessions: total - DELETE_USER_BATCH });
    // Several transactions, each of a batch: progress between them, never a step past a batch.
    expect(rest.map((p) => p.done)).toEqual([0, DELETE_USER_BATCH, total - DELETE_USER_BATCH]);
    expect(await sessionsOf(fp, "alice")).toEqual([]);
    expect((await keep.info()).id).toBe(keep.id);
  });

  it("finishes after a crash (kill -9) between batches when run again", async () => {
    const { fp, path: file } = dbs.open();
    const total = DELETE_USER_BATCH * 2 + 1;
    for (let i = 0; i < total; i++) {
      const s = await fp.createSession({ userId: "alice" });
      await s.append({ role: "user", content: `${i}` });
      await s.checkpoint();
    }
    const bob = await fp.createSession({ userId: "bob" });
    await bob.append({ role: "user", content: "stays" });
    await fp.close();

    const worker = startWorker("tests/fixtures/delete-user-worker.ts", [file, "alice", String(DELETE_USER_BATCH)]);
    const run = await worker.done;
    expect(run.stdout.split("\n").filter(Boolean)).toEqual([`0/${total}`, `${DELETE_USER_BATCH}/${total}`]);
    expect(run.code).toBeNull();

    const { fp: reopened } = dbs.open({ path: file });
    expect(await sessionsOf(reopened, "alice")).toHaveLength(total - DELETE_USER_BATCH);
    expect(await reopened.verify()).toMatchObject({ ok: true });
    expect(await reopened.deleteUser("alice")).toEqual({ sessions: total - DELETE_USER_BATCH });
    expect(await sessionsOf(reopened, "alice")).toEqual([]);
    expect((await (await reopened.getSession(bob.id, { userId: "bob" })).history()).map((m) => m.content)).toEqual(["stays"]);
  });

  it("keeps a session with a move in progress, deletes the others, and says so; a rerun then finishes", async () => {
    const { fp, path: file } = dbs.open();
    const sessions = [];
    for (let i = 0; i < 3; i++) sessions.push(await fp.createSession({ userId: "alice" }));
    const busy = sessions[1]!;
    const cp = await busy.checkpoint();
    await sqlOn(
      file,
      `INSERT INTO moves (id, session_id, kind, spec, status, pid, created_at) VALUES ('mv_busy', $1, 'rollback', $2, 'running', 1, 0)`,
      [busy.id, JSON.stringify({ newBranch: { forkCheckpointId: cp.id } })],
    );
    const error = await rejectionOf(fp.deleteUser("alice"));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.code).toBe("MOVE_IN_PROGRESS");
    expect(error.message).toContain(busy.id);
    expect(await sessionsOf(fp, "alice")).toEqual([busy.id]);

    await sqlOn(file, `UPDATE moves SET status = 'done' WHERE id = 'mv_busy'`);
    expect(await fp.deleteUser("alice")).toEqual({ sessions: 1 });
    expect(await sessionsOf(fp, "alice")).toEqual([]);
  });
});
