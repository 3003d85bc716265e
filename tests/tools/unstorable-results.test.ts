// A tool result forkpoint cannot store (over the size limit, nested deeper than the limit, not writable as JSON) is
// never replaced silently: `invoke` records the call as failed, saying why, and rejects with the typed error; a replay
// fails as a replay whose tool threw. What is stored always exports, imports and clones.
import { describe, expect, it } from "vitest";
import {
  PayloadTooLargeError,
  ToolReplayError,
  ValidationError,
  defineTool,
  type Forkpoint,
  type JsonValue,
  type SessionHandle,
} from "../../src/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const LIMIT = 2_000;

/** `[[[...1...]]]`: `depth` nested arrays. */
function deep(depth: number): JsonValue {
  let value: JsonValue = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/** A tool returning whatever `next` holds, counting its runs and recording what its undo is given. */
function harness(options: { limits?: { maxPayloadBytes?: number } } = {}) {
  const state = { next: undefined as unknown, runs: 0, undone: [] as unknown[] };
  // Gives what a test puts there, JSON or not: typed as a tool's result, whatever it is at run time.
  const give = defineTool({
    name: "give",
    run: () => (state.runs++, state.next as JsonValue),
    undo: ({ result }) => void state.undone.push(result),
  });
  const { fp } = dbs.open({ tools: [give], ...options });
  return { fp, state };
}

/** The session exports, imports into another database and clones, and the database verifies. */
async function roundTrips(fp: Forkpoint, s: SessionHandle): Promise<void> {
  const doc = await fp.exportSession(s.id, { userId: "u" });
  const { fp: other } = dbs.open();
  const copy = await other.importSession(doc, { userId: "u" });
  expect(await other.exportSession(copy.id, { userId: "u" })).toEqual(doc);
  const twin = await fp.clone(s.id, { userId: "u" });
  expect((await twin.toolTrack()).map((t) => [t.status, t.result, t.error])).toEqual(
    (await s.toolTrack()).map((t) => [t.status, t.result, t.error]),
  );
  expect((await fp.verify()).ok).toBe(true);
}

describe("a tool result that cannot be stored", () => {
  it.each([
    ["over the size limit", () => ({ text: "x".repeat(LIMIT) }), PayloadTooLargeError, "PAYLOAD_TOO_LARGE"],
    ["nested 2,001 deep", () => deep(2_001), PayloadTooLargeError, "PAYLOAD_TOO_LARGE"],
    ["nested 5,000 deep", () => deep(5_000), PayloadTooLargeError, "PAYLOAD_TOO_LARGE"],
    ["holding a cycle", () => ((o: Record<string, unknown>) => ((o.self = o), o))({}), ValidationError, "VALIDATION_ERROR"],
    ["holding a BigInt", () => ({ n: 1n }), ValidationError, "VALIDATION_ERROR"],
  ])("%s: invoke rejects with a typed error and records the call as failed, saying why", async (_label, make, errorClass, code) => {
    const { fp, state } = harness({ limits: { maxPayloadBytes: LIMIT } });
    const s = await fp.createSession({ userId: "u" });
    const cp = await s.checkpoint({ name: "before" });
    state.next = make();
    const error = await rejectionOf(s.invoke("give", {}));
    expect(error).toBeInstanceOf(errorClass);
    expect(error.code).toBe(code);
    expect(error.message).toContain("result");
    expect(state.runs).toBe(1); // the tool ran: its effect is out there, and the call is recorded
    const [call] = await s.toolTrack();
    expect(call).toMatchObject({ tool: "give", status: "failed", result: null, applied: false });
    expect(call!.error).toMatchObject({ name: errorClass.name, code });
    expect((call!.error as { message: string }).message).toContain("could not be stored");
    // A failed call is never undone: no undo is ever handed a result that stands for nothing.
    await s.rollback(cp.id);
    expect(state.undone).toEqual([]);
    await roundTrips(fp, s);
  });

  it("a result within the limits (2,000 deep, a Date as JSON writes it) is stored and given back to undo", async () => {
    const { fp, state } = harness();
    const s = await fp.createSession({ userId: "u" });
    const cp = await s.checkpoint({ name: "before" });
    state.next = deep(2_000);
    await s.invoke("give", {});
    state.next = { at: new Date(0) };
    await s.invoke("give", {});
    expect((await s.toolTrack()).map((t) => t.status)).toEqual(["succeeded", "succeeded"]);
    await roundTrips(fp, s);
    await s.rollback(cp.id);
    expect(state.undone).toEqual([{ at: new Date(0).toISOString() }, deep(2_000)]);
  });

  it("a replay whose result cannot be stored fails as a replay, naming the limit", async () => {
    const { fp, state } = harness({ limits: { maxPayloadBytes: LIMIT } });
    const s = await fp.createSession({ userId: "u" });
    const cp = await s.checkpoint({ name: "before" });
    state.next = "small";
    await s.invoke("give", {});
    const there = (await s.info()).currentBranchId;
    await s.rollback(cp.id);
    expect(state.undone).toEqual(["small"]);
    state.next = "x".repeat(LIMIT);
    const error = await rejectionOf(s.switchBranch(there));
    expect(error).toBeInstanceOf(ToolReplayError);
    expect(error.cause).toBeInstanceOf(PayloadTooLargeError);
    expect((await s.info()).currentBranchId).not.toBe(there);
  });

  it("a thrown error's message over the size limit is stored cut short, saying so, and the session still exports", async () => {
    const fail = defineTool<Record<string, never>, null>({
      name: "fail",
      run: () => {
        throw new Error("y".repeat(3 * LIMIT));
      },
    });
    const { fp } = dbs.open({ tools: [fail], limits: { maxPayloadBytes: LIMIT } });
    const s = await fp.createSession({ userId: "u" });
    expect((await rejectionOf(s.invoke("fail", {}))).message).toHaveLength(3 * LIMIT); // the caller gets its own error
    const [call] = await s.toolTrack();
    const message = (call!.error as { message: string }).message;
    expect(message.startsWith("yyy")).toBe(true);
    expect(message).toContain("cut short");
    expect(Buffer.byteLength(JSON.stringify(call!.error))).toBeLessThanOrEqual(LIMIT);
    await roundTrips(fp, s);
  });

  it("recordToolCall refuses an error over the size limit, writing nothing", async () => {
    const { fp } = dbs.open({ limits: { maxPayloadBytes: LIMIT } });
    const s = await fp.createSession({ userId: "u" });
    const error = await rejectionOf(s.recordToolCall({ tool: "t", args: {}, error: "z".repeat(LIMIT) }));
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect(error.message).toContain("error");
    expect(await s.toolTrack()).toEqual([]);
  });
});
