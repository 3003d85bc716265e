// resolveToolCall: an operator records what became of a call a crash left running (reported unknown): succeeded, with
// its result (later moves undo it with that result), or failed (never undone); refused for calls that have an outcome
// or whose owner still runs them.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ConflictError, NotFoundError, ValidationError, type SessionHandle } from "../../src/index.js";
import { dumpOf, expireLeases, openForkpoint } from "../fixtures/backend.js";
import { heldWriteTool, tempDir, type ToolCallRecord } from "../fixtures/file-tools.js";
import { startWorker } from "../fixtures/workers.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const WORKER = fileURLToPath(new URL("../fixtures/request-move-worker.ts", import.meta.url));

/** Starts held_write (with `requestId`) in a child process and SIGKILLs it while the tool runs: a call of unknown outcome. */
async function crashedCall(db: string, s: SessionHandle, file: string, requestId: string): Promise<string> {
  const w = startWorker(WORKER, [db, s.id, "alice", "invoke", requestId, file, `${file}.log`]);
  await w.ready;
  const running = new Promise<void>((resolve) => w.child.stdout.on("data", (d: string) => d.includes("running") && resolve()));
  w.child.stdin.write("go\n");
  await running;
  w.child.kill("SIGKILL");
  await w.done;
  // On PostgreSQL a server's call is held by a lease: the dead one's runs out (made to, here).
  await expireLeases(db);
  const track = await s.toolTrack();
  const call = track.find((t) => t.status === "running")!;
  expect(call).toBeDefined();
  return call.id;
}

async function conflict(call: Promise<unknown>, code: string): Promise<void> {
  const error = await rejectionOf(call);
  expect(error).toBeInstanceOf(ConflictError);
  expect(error.code).toBe(code);
}

describe("resolveToolCall", () => {
  it("a SIGKILLed call resolved as succeeded is undone by a later move, with its recorded result", async () => {
    const dir = tempDir();
    const calls: ToolCallRecord[] = [];
    const { fp, path: db } = dbs.open({ tools: [heldWriteTool({ calls })] });
    const s = await fp.createSession({ userId: "alice" });
    const before = await s.checkpoint({ name: "before the call" });
    const file = path.join(dir, "held.txt");
    const id = await crashedCall(db, s, file, "send-1");
    expect(fs.readFileSync(file, "utf8")).toBe("held");
    // Until resolved: a retry of its request cannot tell, and a move leaves it alone.
    const args = { path: file, text: "held" };
    await conflict(s.invoke("held_write", args, { requestId: "send-1" }), "CALL_UNKNOWN");
    expect((await s.plan({ checkpointId: before.id })).unknown.map((t) => t.id)).toEqual([id]);

    const resolved = await s.resolveToolCall(id, { status: "succeeded", result: { previous: null } });
    expect(resolved).toMatchObject({ id, status: "succeeded", result: { previous: null }, applied: true, error: null });
    expect(resolved.completedAt).toBeInstanceOf(Date);
    // The request's retry now answers with the result; the tool does not run again.
    expect(await s.invoke("held_write", args, { requestId: "send-1" })).toEqual({ previous: null });
    const back = await s.rollback(before.id);
    expect(back.undone.map((t) => t.id)).toEqual([id]);
    expect(back.unknown).toEqual([]);
    expect(calls.map((c) => [c.op, c.invocationId, c.result])).toEqual([["undo", id, { previous: null }]]);
    expect(fs.existsSync(file)).toBe(false);
    // Once resolved, it has an outcome.
    await conflict(s.resolveToolCall(id, { status: "failed", error: "x" }), "CALL_NOT_UNKNOWN");
    expect((await fp.verify({ sessionId: s.id })).ok).toBe(true);
  });

  it("a call resolved as failed is never undone, and its error is what the operator gave", async () => {
    const dir = tempDir();
    const calls: ToolCallRecord[] = [];
    const { fp, path: db } = dbs.open({ tools: [heldWriteTool({ calls })] });
    const s = await fp.createSession({ userId: "alice" });
    const before = await s.checkpoint();
    const file = path.join(dir, "held.txt");
    const id = await crashedCall(db, s, file, "send-2");
    const resolved = await s.resolveToolCall(id, { status: "failed", error: { message: "the server refused it", name: "SmtpError" } });
    expect(resolved).toMatchObject({
      status: "failed",
      applied: false,
      result: null,
      error: { message: "the server refused it", name: "SmtpError" },
    });
    const retry = await rejectionOf(s.invoke("held_write", { path: file, text: "held" }, { requestId: "send-2" }));
    expect([retry.name, retry.message]).toEqual(["SmtpError", "the server refused it"]);
    const back = await s.rollback(before.id);
    expect([back.undone, back.unknown, back.skipped]).toEqual([[], [], []]);
    expect(calls).toEqual([]);
    expect(fs.readFileSync(file, "utf8")).toBe("held");
  });

  it("is refused while the call's owner, another process, still runs it; resolved once that process is killed", async () => {
    const dir = tempDir();
    const { fp, path: db } = dbs.open({ tools: [heldWriteTool()] });
    const s = await fp.createSession({ userId: "alice" });
    const file = path.join(dir, "held.txt");
    const w = startWorker(WORKER, [db, s.id, "alice", "invoke", "live-1", file, `${file}.log`]);
    await w.ready;
    const running = new Promise<void>((resolve) => w.child.stdout.on("data", (d: string) => d.includes("running") && resolve()));
    w.child.stdin.write("go\n");
    await running;
    const [call] = await s.toolTrack();
    expect(call!.status).toBe("running");
    const dump = await dumpOf(db);
    await conflict(s.resolveToolCall(call!.id, { status: "succeeded", result: { previous: null } }), "CALL_IN_PROGRESS");
    await conflict(s.resolveToolCall(call!.id, { status: "failed", error: "gone" }), "CALL_IN_PROGRESS");
    expect(await dumpOf(db)).toEqual(dump);
    w.child.kill("SIGKILL");
    await w.done;
    await expireLeases(db);
    expect(await s.resolveToolCall(call!.id, { status: "failed", error: "gone" })).toMatchObject({ status: "failed", applied: false });
  });

  it("is refused for a call that has an outcome, one whose owner still runs it, and ids not of this session", async () => {
    const dir = tempDir();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let running!: () => void;
    const started = new Promise<void>((resolve) => (running = resolve));
    const { fp, path: db } = dbs.open({ tools: [heldWriteTool({ gate, onRun: () => running() })] });
    const s = await fp.createSession({ userId: "alice" });
    const done = await s.recordToolCall({ tool: "held_write", args: {}, result: { previous: null } });
    await conflict(s.resolveToolCall(done.id, { status: "succeeded", result: null }), "CALL_NOT_UNKNOWN");
    const call = s.invoke("held_write", { path: path.join(dir, "f"), text: "t" });
    await started;
    const live = (await s.toolTrack()).find((t) => t.status === "running")!;
    // Another handle (its own lock): the call's owner, this process, is running it.
    const other = dbs.track(openForkpoint({ path: db, tools: [heldWriteTool()] }));
    const t = await other.getSession(s.id, { userId: "alice" });
    const dump = await dumpOf(db);
    await conflict(t.resolveToolCall(live.id, { status: "failed", error: "no" }), "CALL_IN_PROGRESS");
    expect(await dumpOf(db)).toEqual(dump);
    release();
    await call;
    await conflict(t.resolveToolCall(live.id, { status: "failed", error: "no" }), "CALL_NOT_UNKNOWN");
    const elsewhere = await fp.createSession({ userId: "alice" });
    expect(await rejectionOf(elsewhere.resolveToolCall(live.id, { status: "failed", error: "no" }))).toBeInstanceOf(NotFoundError);
    const unknown = await rejectionOf(s.resolveToolCall("tc_unknown", { status: "failed", error: "no" }));
    expect(unknown).toBeInstanceOf(NotFoundError);
    // A tool call, not a tool (an unknown tool name is `tool not found`).
    expect(unknown).toMatchObject({ code: "NOT_FOUND", kind: "tool call", message: 'tool call not found: "tc_unknown"' });
    for (const bad of [{}, { status: "done" }, { status: "failed" }, { status: "succeeded", result: 1, error: "x" }, null]) {
      expect(await rejectionOf(s.resolveToolCall(live.id, bad as never)), JSON.stringify(bad)).toBeInstanceOf(ValidationError);
    }
    // A wrong error says what an error may be, not zod's "Invalid input".
    for (const error of [5, { message: 5 }, undefined]) {
      const refused = await rejectionOf(s.resolveToolCall(live.id, { status: "failed", error } as never));
      expect(refused.field).toBe("outcome.error");
      expect(refused.message).toContain("must be a message (a string) or { message, name? }");
    }
  });
});
