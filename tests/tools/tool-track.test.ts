// invoke, recordToolCall, toolTrack and automatic checkpoints, with real file-writing tools.
import * as fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { NotFoundError, defineTool } from "../../src/index.js";
import { ExplodeError, readOrNull } from "../fixtures/file-tools.js";
import { ids, openWorld, successfulUndos, type World } from "../fixtures/harness.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

let w: World;
afterEach(async () => {
  await w?.close();
});

describe("invoke", () => {
  it("resolves to the tool's result and writes the file", async () => {
    w = await openWorld();
    const f = w.file("a.txt");
    await expect(w.s.invoke("write_file", { path: f, text: "one" })).resolves.toEqual({ previous: null });
    await expect(w.s.invoke("write_file", { path: f, text: "two" })).resolves.toEqual({ previous: "one" });
    expect(readOrNull(f)).toBe("two");
  });

  it("rejects with the tool's own error after recording the call as failed", async () => {
    w = await openWorld();
    const f = w.file("x.txt");
    let thrown: unknown;
    try {
      await w.s.invoke("explode", { path: f });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ExplodeError);
    expect((thrown as Error).message).toBe(`boom while writing ${f}`);
    const track = await w.s.toolTrack();
    expect(track).toHaveLength(1);
    expect(track[0]).toMatchObject({ tool: "explode", status: "failed", result: null, applied: false, args: { path: f } });
    expect(track[0]!.error).toMatchObject({ message: `boom while writing ${f}`, name: "ExplodeError" });
    expect(track[0]!.completedAt).toBeInstanceOf(Date);
  });

  it("an unknown tool name is a NotFoundError and records nothing", async () => {
    w = await openWorld();
    await expect(w.s.invoke("no_such_tool", { a: 1 })).rejects.toBeInstanceOf(NotFoundError);
    await expect(w.s.invoke("no_such_tool", { a: 1 })).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await w.s.toolTrack()).toEqual([]);
  });

  it("hands run the invocation id and replay=false", async () => {
    w = await openWorld();
    await w.s.invoke("write_file", { path: w.file("a"), text: "x" });
    const [inv] = await w.s.toolTrack();
    expect(w.calls).toEqual([expect.objectContaining({ op: "run", invocationId: inv!.id, replay: false })]);
  });
});

describe("toolTrack", () => {
  it("lists the lineage's invocations in order with status, between messages", async () => {
    w = await openWorld();
    await w.s.append({ role: "user", content: "write some files" });
    await w.s.invoke("write_file", { path: w.file("a"), text: "A" });
    await w.s.append({ role: "assistant", content: "done a" });
    await w.s.invoke("explode", { path: w.file("b") }).catch(() => undefined);
    await w.s.invoke("send_email", { to: "bob@example.com", subject: "hi" });
    await w.s.invoke("append_line", { path: w.file("log"), line: "l1" });

    const track = await w.s.toolTrack();
    expect(track.map((t) => [t.tool, t.status, t.applied])).toEqual([
      ["write_file", "succeeded", true],
      ["explode", "failed", false],
      ["send_email", "succeeded", true],
      ["append_line", "succeeded", true],
    ]);
    expect(track.map((t) => t.position)).toEqual([2, 4, 5, 6]);
    expect(track[0]!.result).toEqual({ previous: null });
    expect(track[2]!.result).toEqual({ sent: 1 });
    expect(track[3]!.result).toEqual({ sizeBefore: 0 });
    const info = await w.s.info();
    for (const t of track) expect(t.branchId).toBe(info.currentBranchId);
  });

  it("shows another branch's lineage with { branchId }, and the current lineage after a rollback", async () => {
    w = await openWorld();
    const cp0 = await w.s.checkpoint({ name: "empty" });
    await w.s.invoke("write_file", { path: w.file("a"), text: "A" });
    const root = (await w.s.info()).currentBranchId;
    const moved = await w.s.rollback(cp0.id);
    await w.s.invoke("write_file", { path: w.file("b"), text: "B" });

    const current = await w.s.toolTrack();
    expect(current.map((t) => t.args)).toEqual([{ path: w.file("b"), text: "B" }]);
    expect(current[0]!.branchId).toBe(moved.branch.id);
    const onRoot = await w.s.toolTrack({ branchId: root });
    expect(onRoot.map((t) => [t.args, t.applied])).toEqual([[{ path: w.file("a"), text: "A" }, false]]);
  });
});

describe("recordToolCall", () => {
  it("records a call that ran elsewhere, and a rollback undoes it with the registered undo", async () => {
    w = await openWorld();
    const f = w.file("framework.txt");
    const cp0 = await w.s.checkpoint();
    // Some framework (AI SDK, LangGraph) ran the tool itself:
    fs.writeFileSync(f, "written by the framework");
    const inv = await w.s.recordToolCall({
      tool: "write_file",
      args: { path: f, text: "written by the framework" },
      result: { previous: null },
      callId: "call_123",
    });
    expect(inv).toMatchObject({ tool: "write_file", status: "succeeded", applied: true, callId: "call_123", result: { previous: null } });
    expect(w.calls).toEqual([]); // recorded, not run

    const moved = await w.s.rollback(cp0.id);
    expect(ids(moved.undone)).toEqual([inv.id]);
    expect(readOrNull(f)).toBeNull();
    expect(w.calls).toEqual([
      expect.objectContaining({
        op: "undo",
        invocationId: inv.id,
        args: { path: f, text: "written by the framework" },
        result: { previous: null },
      }),
    ]);
  });

  it("a recorded failed call is never undone", async () => {
    w = await openWorld();
    const f = w.file("kept.txt");
    fs.writeFileSync(f, "untouched");
    const cp0 = await w.s.checkpoint();
    const inv = await w.s.recordToolCall({ tool: "write_file", args: { path: f, text: "never written" }, error: "disk full" });
    expect(inv).toMatchObject({ status: "failed", applied: false, error: { message: "disk full" } });
    const moved = await w.s.rollback(cp0.id);
    expect(moved.undone).toEqual([]);
    expect(moved.failed).toEqual([]);
    expect(readOrNull(f)).toBe("untouched");
    expect(successfulUndos(w.calls).size).toBe(0);
  });

  it("a failed call can be recorded in the shape toolTrack reports it (result null beside the error)", async () => {
    w = await openWorld();
    const inv = await w.s.recordToolCall({
      tool: "write_file",
      args: { path: w.file("x"), text: "x" },
      result: null,
      error: { message: "disk full", name: "IOError" },
    });
    expect(inv).toMatchObject({ status: "failed", result: null, error: { message: "disk full", name: "IOError" } });
    const [again] = (await w.s.toolTrack()).slice(-1);
    const { tool, args, result, error } = again!;
    const copy = await w.s.recordToolCall({ tool, args, result, error: error! });
    expect(copy).toMatchObject({ status: "failed", result: null, error: { message: "disk full", name: "IOError" } });
  });
});

describe("autoCheckpoint afterToolCalls", () => {
  it("creates exactly one automatic checkpoint per tool call, at the call's position", async () => {
    w = await openWorld({ autoCheckpoint: { afterToolCalls: true } });
    await w.s.append({ role: "user", content: "go" });
    await w.s.invoke("write_file", { path: w.file("a"), text: "A" });
    await w.s.append([
      { role: "assistant", content: "ok" },
      { role: "user", content: "more" },
    ]);
    await w.s.invoke("append_line", { path: w.file("log"), line: "x" });
    await w.s.invoke("explode", { path: w.file("z") }).catch(() => undefined);
    await w.s.recordToolCall({ tool: "write_file", args: { path: w.file("ext"), text: "e" }, result: { previous: null } });

    const track = await w.s.toolTrack();
    expect(track).toHaveLength(4);
    const page = await w.fp.listCheckpoints({ userId: "alice", sessionId: w.s.id, limit: 100 });
    expect(page.items.every((c) => c.auto)).toBe(true);
    expect(page.items).toHaveLength(4);
    expect(page.items.map((c) => c.position).sort((a, b) => a - b)).toEqual(track.map((t) => t.position));
    const auto = await w.fp.listCheckpoints({ userId: "alice", sessionId: w.s.id, auto: true, limit: 100 });
    expect(auto.items).toHaveLength(4);
  });

  it("an automatic checkpoint is a rollback target that undoes the later calls", async () => {
    w = await openWorld({ autoCheckpoint: { afterToolCalls: true } });
    const a = w.file("a");
    const b = w.file("b");
    await w.s.invoke("write_file", { path: a, text: "A" });
    await w.s.invoke("write_file", { path: b, text: "B" });
    await w.s.invoke("write_file", { path: a, text: "A2" });
    const page = await w.fp.listCheckpoints({ userId: "alice", sessionId: w.s.id, auto: true, limit: 100 });
    const first = page.items.find((c) => c.position === 1)!;
    const moved = await w.s.rollback(first.id);
    expect(moved.undone.map((t) => t.position)).toEqual([3, 2]);
    expect(readOrNull(a)).toBe("A");
    expect(readOrNull(b)).toBeNull();
  });

  it("is taken right after the call, not at the head when the call ends: what was written while the tool ran comes after it", async () => {
    let release: () => void = () => undefined;
    let entered: () => void = () => undefined;
    const running = new Promise<void>((r) => (entered = r));
    const gate = defineTool({
      name: "gate",
      run: () =>
        new Promise<string>((r) => {
          release = () => r("ok");
          entered();
        }),
      undo: async () => {},
    });
    const { fp } = dbs.open({ tools: [gate], autoCheckpoint: { afterToolCalls: true } });
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "hi" });
    const call = s.invoke("gate", {});
    await running; // journaled, and its tool running
    await s.append({ role: "assistant", content: "written while the tool ran" });
    await s.setState({ during: true });
    release();
    await call;
    const [cp] = (await fp.listCheckpoints({ userId: "alice", auto: true })).items;
    expect(cp!.position).toBe((await s.toolTrack())[0]!.position);
    const restored = await s.restore(cp!.id);
    expect(restored.history.map((m) => m.content)).toEqual(["hi"]);
    expect(restored.state).toEqual({});
    expect(restored.toolTrack.map((t) => t.status)).toEqual(["succeeded"]);
  });

  it("is off unless asked: tool calls alone create no checkpoint", async () => {
    w = await openWorld();
    await w.s.invoke("write_file", { path: w.file("a"), text: "A" });
    await w.s.recordToolCall({ tool: "write_file", args: { path: w.file("b"), text: "B" }, result: { previous: null } });
    const page = await w.fp.listCheckpoints({ userId: "alice", sessionId: w.s.id });
    expect(page.items).toEqual([]);
  });
});
