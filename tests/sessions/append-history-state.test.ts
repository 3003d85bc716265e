// Appending messages, reading the history of any branch, and the session state document.
import { describe, expect, it } from "vitest";
import type { JsonValue } from "../../src/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { dumpOf } from "../fixtures/backend.js";

const dbs = tempDatabases();

describe("append", () => {
  it("appends one message and returns it as a one-element array with id, branch, position, role, content and times", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const out = await s.append({ role: "user", content: "hi" });
    expect(out).toEqual([
      {
        id: expect.any(String),
        branchId: (await s.info()).currentBranchId,
        position: 1,
        role: "user",
        content: "hi",
        clientId: null,
        metadata: null,
        createdAt: expect.any(Date),
      },
    ]);
  });

  it("appends many messages at once with consecutive positions after the existing ones and distinct ids", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "system", content: "be brief" });
    const out = await s.append([
      { role: "user", content: "a" },
      { role: "assistant", content: "b" },
      { role: "user", content: "c" },
    ]);
    expect(out.map((m) => m.position)).toEqual([2, 3, 4]);
    expect(out.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(new Set([...out.map((m) => m.id)]).size).toBe(3);
  });

  it("accepts an empty array and stores nothing", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const before = await dumpOf(path);
    expect(await s.append([])).toEqual([]);
    expect(await dumpOf(path)).toEqual(before);
  });

  it("stores content of any JSON shape and gives it back unchanged", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const contents: JsonValue[] = [
      "plain text",
      "",
      "unicode: żółć 🚀 \u0000 \n\t",
      0,
      -12.5,
      true,
      false,
      null,
      [],
      {},
      [1, "two", null, [3], { four: 4 }],
      {
        parts: [
          { type: "text", text: "hi" },
          { type: "image", url: "https://x/y.png" },
        ],
      },
      { toolCalls: [{ id: "call_1", name: "search", arguments: { q: "flights", max: 3 } }] },
      { deep: { deeper: { deepest: [{ a: { b: { c: "d" } } }] } } },
    ];
    const out = await s.append(contents.map((content) => ({ role: "assistant", content })));
    expect(out.map((m) => m.content)).toEqual(contents);
    expect((await s.history()).map((m) => m.content)).toEqual(contents);
  });

  it("accepts any non-empty role string and keeps clientId and metadata", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const [m] = await s.append({ role: "tool-result", content: { ok: true }, clientId: "ui-42", metadata: { model: "x", tokens: 12 } });
    expect(m).toMatchObject({ role: "tool-result", clientId: "ui-42", metadata: { model: "x", tokens: 12 } });
    expect((await s.history())[0]).toEqual(m);
  });

  it("drops undefined object properties, as JSON does", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const [m] = await s.append({ role: "user", content: { a: 1, b: undefined } as unknown as JsonValue });
    expect(m!.content).toEqual({ a: 1 });
  });
});

describe("history", () => {
  it("is the current branch's messages, oldest first, equal to what append returned", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const first = await s.append({ role: "user", content: "1" });
    const rest = await s.append([
      { role: "assistant", content: "2" },
      { role: "user", content: "3" },
    ]);
    expect(await s.history()).toEqual([...first, ...rest]);
  });

  it("numbers positions over every log entry, so a state change takes a position between messages", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "a" });
    await s.setState({ step: 1 });
    await s.append({ role: "user", content: "b" });
    expect((await s.history()).map((m) => m.position)).toEqual([1, 3]);
  });

  it("reads another branch with { branchId }, including the lineage it shares with its parent", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const root = (await s.info()).currentBranchId;
    const shared = await s.append([
      { role: "user", content: "1" },
      { role: "assistant", content: "2" },
    ]);
    const cp = await s.checkpoint();
    const onRoot = await s.append({ role: "user", content: "3 on root" });
    const { branch } = await s.rollback(cp.id);
    const onBranch = await s.append({ role: "user", content: "3 on branch" });

    expect(await s.history()).toEqual([...shared, ...onBranch]);
    expect(await s.history({ branchId: branch.id })).toEqual([...shared, ...onBranch]);
    expect(await s.history({ branchId: root })).toEqual([...shared, ...onRoot]);
  });

  it("shows on the new branch the messages of the parent with their original ids and branch", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const root = (await s.info()).currentBranchId;
    await s.append({ role: "user", content: "1" });
    const cp = await s.checkpoint();
    await s.rollback(cp.id);
    const [inherited] = await s.history();
    expect(inherited!.branchId).toBe(root);
  });
});

describe("state", () => {
  it("is {} for a new session", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    expect(await s.getState()).toEqual({});
  });

  it("setState replaces the document and returns it; getState reads it back", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    expect(await s.setState({ cart: ["a"], total: 3 })).toEqual({ cart: ["a"], total: 3 });
    expect(await s.getState()).toEqual({ cart: ["a"], total: 3 });
    await s.setState({ other: true });
    expect(await s.getState()).toEqual({ other: true });
  });

  it("takes an updater function that receives the previous state", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.setState({ count: 1 });
    const seen: JsonValue[] = [];
    const next = await s.setState((prev) => {
      seen.push(prev);
      return { count: ((prev as { count: number }).count ?? 0) + 1 };
    });
    expect(seen).toEqual([{ count: 1 }]);
    expect(next).toEqual({ count: 2 });
    expect(await s.getState()).toEqual({ count: 2 });
  });

  it("applies concurrent updaters one after the other, losing none", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.setState({ n: 0 });
    await Promise.all(Array.from({ length: 10 }, () => s.setState((p) => ({ n: (p as { n: number }).n + 1 }))));
    expect(await s.getState()).toEqual({ n: 10 });
  });

  it("may be any JSON value, not only an object", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    for (const value of [[1, 2], "text", 42, null, true] as JsonValue[]) {
      await s.setState(value);
      expect(await s.getState()).toEqual(value);
    }
  });

  it("after a rollback is the state at the checkpoint's position", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.setState({ step: 1 });
    await s.append({ role: "user", content: "a" });
    const cp = await s.checkpoint();
    await s.setState({ step: 2 });
    await s.append({ role: "user", content: "b" });
    await s.rollback(cp.id);
    expect(await s.getState()).toEqual({ step: 1 });
  });

  it("after an edit is the state just before the edited message", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const [m1] = await s.append({ role: "user", content: "1" });
    await s.setState({ v: 1 });
    const [m2] = await s.append({ role: "user", content: "2" });
    await s.setState({ v: 2 });
    await s.append({ role: "user", content: "3" });

    await s.edit(m2!.id, { role: "user", content: "2'" });
    expect(await s.getState()).toEqual({ v: 1 });
    await s.edit(m1!.id, { role: "user", content: "1'" });
    expect(await s.getState()).toEqual({});
  });

  it("is per branch: changing it on a new branch leaves the original branch's state as it was", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const root = (await s.info()).currentBranchId;
    await s.setState({ where: "root" });
    const cp = await s.checkpoint();
    await s.append({ role: "user", content: "so the rollback forks a branch" });
    await s.rollback(cp.id);
    await s.setState({ where: "branch" });
    await s.switchBranch(root);
    expect(await s.getState()).toEqual({ where: "root" });
  });

  it("rejects an updater that returns a promise, storing nothing", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const before = await dumpOf(path);
    const e = await rejectionOf(s.setState((() => Promise.resolve({ a: 1 })) as unknown as () => JsonValue));
    expect(e.code).toBe("VALIDATION_ERROR");
    expect(await dumpOf(path)).toEqual(before);
  });
});
