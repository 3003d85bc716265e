// checkpointTools: ready tools a model calls to manage its own session; handlers return structured JSON.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkpointTools, type AgentTool, type Forkpoint, type SessionHandle } from "../../src/index.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let fp: Forkpoint;
let s: SessionHandle;
let tools: Map<string, AgentTool>;
const call = (name: string, input?: unknown) => tools.get(name)!.handler(input);

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "forkpoint-agent-tools-"));
  fp = openForkpoint({ path: join(dir, "db.sqlite"), autoCheckpoint: { everyMessages: 1 } });
  s = await fp.createSession({ userId: "agent-user" });
  tools = new Map(checkpointTools(s).map((t) => [t.name, t]));
});
afterEach(async () => {
  await fp.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("checkpointTools", () => {
  it("offers six tools, each with a description and a JSON Schema object input", () => {
    expect([...tools.keys()]).toEqual([
      "create_checkpoint",
      "list_checkpoints",
      "rollback",
      "delete_checkpoint",
      "checkpoint_info",
      "cleanup_auto_checkpoints",
    ]);
    for (const tool of tools.values()) {
      expect(tool.description.length).toBeGreaterThan(10);
      expect(tool.inputSchema).toMatchObject({ type: "object" });
      expect(JSON.parse(JSON.stringify(tool.inputSchema))).toEqual(tool.inputSchema);
    }
    expect(tools.get("rollback")!.inputSchema).toMatchObject({ required: ["checkpointId"] });
  });

  it("creates, lists, describes, rolls back to and deletes checkpoints, answering in plain JSON", async () => {
    await s.append({ role: "user", content: "one" });
    const created = await call("create_checkpoint", { name: "first" });
    expect(created).toMatchObject({ ok: true, checkpoint: { name: "first", position: 1, auto: false } });
    const id = (created.checkpoint as { id: string }).id;
    expect(JSON.parse(JSON.stringify(created))).toEqual(created);

    await s.append({ role: "assistant", content: "two" });
    const listed = await call("list_checkpoints", { auto: false });
    expect(listed).toMatchObject({ ok: true, nextCursor: null });
    expect((listed.checkpoints as { id: string }[]).map((c) => c.id)).toEqual([id]);

    expect(await call("checkpoint_info", { checkpointId: id })).toMatchObject({
      ok: true,
      messages: 1,
      toolCalls: 0,
      state: {},
      checkpoint: { id, name: "first" },
    });

    const rolled = await call("rollback", { checkpointId: id });
    expect(rolled).toMatchObject({ ok: true, undone: [], replayed: [], skipped: [], failed: [], unknown: [] });
    expect((await s.info()).currentBranchId).toBe(rolled.branchId);
    expect((await s.history()).map((m) => m.content)).toEqual(["one"]);

    // The rollback's branch forks from it, so it stays.
    expect(await call("delete_checkpoint", { checkpointId: id })).toMatchObject({ ok: false, error: { code: "CHECKPOINT_IN_USE" } });
    const spare = (await call("create_checkpoint", {})).checkpoint as { id: string };
    expect(await call("delete_checkpoint", { checkpointId: spare.id })).toEqual({ ok: true, deleted: spare.id });
  });

  it("cleans up automatic checkpoints, keeping the newest few and any a branch forks from", async () => {
    for (let i = 0; i < 6; i++) await s.append({ role: "user", content: `m${i}` });
    const autos = (await s.listCheckpoints({ auto: true })).items;
    expect(autos).toHaveLength(6);
    await s.rollback(autos[5]!.id); // the oldest: a branch now forks from it
    const result = await call("cleanup_auto_checkpoints", { keepLatest: 2 });
    expect(result).toMatchObject({ ok: true });
    expect(result.kept).toEqual([autos[0]!.id, autos[1]!.id, autos[5]!.id]);
    expect((result.deleted as string[]).sort()).toEqual([autos[2]!.id, autos[3]!.id, autos[4]!.id].sort());
    expect((await s.listCheckpoints({ auto: true })).items.map((c) => c.id)).toEqual([autos[0]!.id, autos[1]!.id, autos[5]!.id]);
  });

  it("cleanup run by two agents at once on two openers: both succeed, and together they delete each checkpoint once", async () => {
    for (let i = 0; i < 10; i++) await s.append({ role: "user", content: `m${i}` });
    const other = openForkpoint({ path: join(dir, "db.sqlite") });
    try {
      const theirs = checkpointTools(await other.getSession(s.id, { userId: "agent-user" })).find(
        (t) => t.name === "cleanup_auto_checkpoints",
      )!;
      const [mine, their] = await Promise.all([call("cleanup_auto_checkpoints", { keepLatest: 2 }), theirs.handler({ keepLatest: 2 })]);
      expect([mine.ok, their.ok]).toEqual([true, true]);
      const deleted = [...(mine.deleted as string[]), ...(their.deleted as string[])];
      expect(deleted).toHaveLength(8);
      expect(new Set(deleted).size).toBe(8);
      expect((await s.listCheckpoints({ auto: true })).items).toHaveLength(2);
    } finally {
      await other.close();
    }
  });

  it("answers bad input and unknown ids with { ok: false, error } instead of throwing", async () => {
    expect(await call("rollback", {})).toMatchObject({ ok: false, error: { code: "VALIDATION_ERROR" } });
    expect(await call("create_checkpoint", { name: 5 })).toMatchObject({ ok: false, error: { code: "VALIDATION_ERROR" } });
    expect(await call("checkpoint_info", { checkpointId: "cp_nope" })).toMatchObject({ ok: false, error: { code: "NOT_FOUND" } });
    expect(await call("list_checkpoints", { cursor: "garbage" })).toMatchObject({ ok: false, error: { code: "VALIDATION_ERROR" } });
  });
});
