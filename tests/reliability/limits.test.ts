// The documented limits (src/models/limits.ts): a 10 MB message works under the default 16 MiB limit and is a
// PayloadTooLargeError under a 1 MiB one; a 100,000-message history reads back whole and in order; state nested
// 1,000 (and 2,000) deep round-trips, 2,001 deep is refused. Every refusal leaves the database exactly as it was.
import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS, PayloadTooLargeError, ValidationError, type JsonValue } from "../../src/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { dumpOf, openForkpoint } from "../fixtures/backend.js";

const dbs = tempDatabases();
const MiB = 1024 * 1024;

/** A text of exactly `bytes` UTF-8 bytes, mixing 1-, 2-, 3- and 4-byte characters. */
function bigText(bytes: number): string {
  const unit = "forkpoint é € 😀 ";
  const unitBytes = Buffer.byteLength(unit, "utf8");
  const text = unit.repeat(Math.floor(bytes / unitBytes));
  return text + "x".repeat(bytes - Buffer.byteLength(text, "utf8"));
}

/** `{ d: { d: ... { leaf: true } } }`: `depth` nested objects. */
function nested(depth: number): JsonValue {
  let value: JsonValue = { leaf: true, depth };
  for (let i = 1; i < depth; i++) value = { d: value };
  return value;
}

function expectTooLarge(error: unknown, limit: number): void {
  expect(error).toBeInstanceOf(PayloadTooLargeError);
  expect(error).toBeInstanceOf(ValidationError);
  expect((error as PayloadTooLargeError).code).toBe("PAYLOAD_TOO_LARGE");
  expect((error as PayloadTooLargeError).limit).toBe(limit);
  expect((error as Error).message).toContain(String(limit));
}

describe("a 10 MB message", () => {
  it("is stored and read back identical under the default 16 MiB limit", async () => {
    expect(DEFAULT_LIMITS.maxPayloadBytes).toBe(16 * MiB);
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const text = bigText(10 * 1000 * 1000);
    const parts = {
      parts: [
        { type: "text", text },
        { type: "note", text: "after the big part" },
      ],
    };
    const [m1, m2] = await s.append([
      { role: "user", content: text },
      { role: "assistant", content: parts },
    ]);
    const history = await s.history();
    expect(history.map((m) => m.id)).toEqual([m1!.id, m2!.id]);
    expect(history[0]!.content === text).toBe(true);
    expect(history[1]!.content).toEqual(parts);
    const cp = await s.checkpoint();
    const restored = await s.restore(cp.id);
    expect(restored.history[0]!.content === text).toBe(true);
  });

  it("is a PayloadTooLargeError under a 1 MiB limit, and the database is unchanged", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "small" });
    await fp.close();

    const small = dbs.track(openForkpoint({ path, limits: { maxPayloadBytes: MiB } }));
    const s2 = await small.getSession(s.id, { userId: "alice" });
    const before = await dumpOf(path);
    const text = bigText(10 * 1000 * 1000);
    expectTooLarge(await rejectionOf(s2.append({ role: "user", content: text })), MiB);
    // in a batch, the good message before it is not written either
    expectTooLarge(
      await rejectionOf(
        s2.append([
          { role: "user", content: "fine" },
          { role: "user", content: { text } },
        ]),
      ),
      MiB,
    );
    expectTooLarge(await rejectionOf(s2.setState({ big: text })), MiB);
    expectTooLarge(await rejectionOf(s2.setState(() => ({ big: text }))), MiB);
    expectTooLarge(await rejectionOf(s2.recordToolCall({ tool: "t", args: { text } })), MiB);
    expectTooLarge(await rejectionOf(s2.recordToolCall({ tool: "t", args: {}, result: text })), MiB);
    expect(await dumpOf(path)).toEqual(before);
    // just under the limit still works
    const fits = bigText(MiB - 2); // + 2 bytes of JSON quotes
    await s2.append({ role: "user", content: fits });
    expect((await s2.history()).at(-1)!.content === fits).toBe(true);
  });
});

describe("a 100,000-message history", () => {
  it("appends in batches of 1,000, reads back 100,000 messages in order, and restores a checkpoint at the end", async () => {
    const TOTAL = 100_000;
    const BATCH = 1_000;
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const early = await s.checkpoint({ name: "empty" });
    for (let b = 0; b < TOTAL / BATCH; b++) {
      const appended = await s.append(
        Array.from({ length: BATCH }, (_, i) => ({ role: i % 2 === 0 ? "user" : "assistant", content: { n: b * BATCH + i + 1 } })),
      );
      expect(appended.at(-1)!.position).toBe((b + 1) * BATCH);
    }
    const history = await s.history();
    expect(history).toHaveLength(TOTAL);
    for (let i = 0; i < TOTAL; i++) {
      if (history[i]!.position !== i + 1 || (history[i]!.content as { n: number }).n !== i + 1) {
        expect.fail(`message ${i + 1} is out of place: ${JSON.stringify(history[i])}`);
      }
    }
    await s.setState({ done: true });
    const end = await s.checkpoint({ name: "end" });
    expect(end.position).toBe(TOTAL + 1);
    const restored = await s.restore(end.id);
    expect(restored.history).toHaveLength(TOTAL);
    expect(restored.history.map((m) => m.id)).toEqual(history.map((m) => m.id));
    expect(restored.state).toEqual({ done: true });
    // and a rollback to the start of it all, and back
    const { branch } = await s.rollback(early.id);
    expect(await s.history()).toEqual([]);
    await s.switchBranch(branch.parentId!);
    expect(await s.history()).toHaveLength(TOTAL);
  }, 120_000);
});

describe("deeply nested state", () => {
  for (const depth of [1_000, DEFAULT_LIMITS.maxDepth]) {
    it(`${depth} levels deep: set, get and restore identical`, async () => {
      const { fp } = dbs.open();
      const s = await fp.createSession({ userId: "alice" });
      const value = nested(depth);
      expect(await s.setState(value)).toEqual(value);
      expect(await s.getState()).toEqual(value);
      const cp = await s.checkpoint();
      await s.setState({});
      expect((await s.restore(cp.id)).state).toEqual(value);
      // also as a message
      await s.append({ role: "tool", content: value });
      expect((await s.history()).at(-1)!.content).toEqual(value);
    });
  }

  it(`${DEFAULT_LIMITS.maxDepth + 1} levels deep: PAYLOAD_TOO_LARGE, and the database is unchanged`, async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.setState({ kept: 1 });
    const before = await dumpOf(path);
    const value = nested(DEFAULT_LIMITS.maxDepth + 1);
    expectTooLarge(await rejectionOf(s.setState(value)), DEFAULT_LIMITS.maxDepth);
    expectTooLarge(await rejectionOf(s.setState(() => value)), DEFAULT_LIMITS.maxDepth);
    expectTooLarge(await rejectionOf(s.append({ role: "user", content: value })), DEFAULT_LIMITS.maxDepth);
    expect(await dumpOf(path)).toEqual(before);
    expect(await s.getState()).toEqual({ kept: 1 });
  });
});

describe("the batch limit", () => {
  it("more messages in one append or turn than maxBatch: PAYLOAD_TOO_LARGE on `messages`, and the database is unchanged", async () => {
    const { fp, path } = dbs.open({ limits: { maxBatch: 3 } });
    const s = await fp.createSession({ userId: "alice" });
    const four = Array.from({ length: 4 }, (_, i) => ({ role: "user", content: `m${i}` }));
    const before = await dumpOf(path);
    for (const call of [() => s.append(four), () => s.turn(four, { name: "t" })]) {
      const error = await rejectionOf(call);
      expect(error).toBeInstanceOf(PayloadTooLargeError);
      expect(error).toMatchObject({ code: "PAYLOAD_TOO_LARGE", field: "messages", limit: 3 });
    }
    expect(await dumpOf(path)).toEqual(before);
    expect(await s.append(four.slice(0, 3))).toHaveLength(3);
  });
});
