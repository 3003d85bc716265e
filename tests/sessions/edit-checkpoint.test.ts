// edit and regenerate with a checkpoint: the fork, the new message and the checkpoint land in one transaction.
import { describe, expect, it } from "vitest";
import { ValidationError, defineTool } from "../../src/index.js";
import { dumpOf } from "../fixtures/backend.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

async function chat(options: Parameters<typeof dbs.open>[0] = {}) {
  const { fp, path } = dbs.open(options);
  const s = await fp.createSession({ userId: "alice" });
  const msgs = await s.append([
    { role: "user", content: "q1" },
    { role: "assistant", content: "a1" },
    { role: "user", content: "q2" },
    { role: "assistant", content: "a2" },
  ]);
  return { fp, path, s, msgs };
}

describe("edit with a checkpoint", () => {
  it("keeps the original role when none is given and puts result.checkpoint at the new message", async () => {
    const { fp, s, msgs } = await chat();
    const seen: string[] = [];
    fp.on("checkpoint", (cp) => void seen.push(cp.name ?? ""));
    const r = await s.edit(msgs[2]!.id, { content: "q2'" }, { checkpoint: { name: "v2", metadata: { by: "ui" } } });
    expect(r.message).toMatchObject({ role: "user", content: "q2'", position: 3, branchId: r.branch.id });
    expect(r.checkpoint).toMatchObject({ name: "v2", metadata: { by: "ui" }, branchId: r.branch.id, position: r.message.position });
    expect(seen).toEqual(["v2"]);
    const restored = await s.restore(r.checkpoint!.id);
    expect(restored.history.map((m) => m.content)).toEqual(["q1", "a1", "q2'"]);
    expect((await s.listCheckpoints()).items.map((c) => c.id)).toEqual([r.checkpoint!.id]);
  });

  it("without a checkpoint option writes none and still takes a given role", async () => {
    const { s, msgs } = await chat();
    const r = await s.edit(msgs[1]!.id, { role: "system", content: "note" });
    expect(r.checkpoint).toBeUndefined();
    expect(r.message.role).toBe("system");
    expect((await s.listCheckpoints()).items).toEqual([]);
  });

  it("refuses a bad checkpoint before anything moves: ValidationError field checkpoint.*, database unchanged", async () => {
    const { s, msgs, path } = await chat();
    const before = await dumpOf(path);
    const cases: [unknown, string][] = [
      [{ checkpoint: { name: "" } }, "checkpoint.name"],
      [{ checkpoint: { name: "x", metadata: [1] } }, "checkpoint.metadata"],
      [{ checkpoint: { nam: "x" } }, "checkpoint"],
      [{ checkpoint: { name: "x", metadata: { n: Number.NaN } } }, "checkpoint.metadata.n"],
    ];
    for (const [options, field] of cases) {
      const e = await s.edit(msgs[2]!.id, { content: "x" }, options as never).catch((x: unknown) => x);
      expect(e, JSON.stringify(options)).toBeInstanceOf(ValidationError);
      expect(e).toMatchObject({ field });
    }
    const e = await s.edit(msgs[2]!.id, { role: "", content: "x" }).catch((x: unknown) => x);
    expect(e).toMatchObject({ field: "message.role" });
    expect(await dumpOf(path)).toEqual(before);
  });

  it("stays a move: tools after the edited message are undone", async () => {
    const log: string[] = [];
    const note = defineTool({
      name: "note",
      run: (args: { text: string }) => void log.push(`+${args.text}`),
      undo: ({ args }) => void log.push(`-${args.text}`),
    });
    const { s, msgs } = await chat({ tools: [note] });
    await s.invoke("note", { text: "after a2" });
    const r = await s.edit(msgs[1]!.id, { content: "a1'" }, { checkpoint: { name: "retry" } });
    expect(log).toEqual(["+after a2", "-after a2"]);
    expect(r.undone.map((t) => t.tool)).toEqual(["note"]);
    expect(r.checkpoint).toMatchObject({ name: "retry", position: 2 });
  });
});

describe("regenerate", () => {
  it("makes a new version of an assistant message at the same position, with a checkpoint", async () => {
    const { s, msgs } = await chat();
    const a2 = msgs[3]!;
    const r = await s.regenerate(a2.id, { content: "a2 again", metadata: { model: "b" } }, { checkpoint: { name: "regen" } });
    expect(r.message).toMatchObject({ role: "assistant", content: "a2 again", metadata: { model: "b" }, position: a2.position });
    expect(r.branch).toMatchObject({ forkPosition: a2.position - 1, current: true, reason: "edit" });
    expect(r.checkpoint).toMatchObject({ name: "regen", position: a2.position, branchId: r.branch.id });
    const v = await s.versions(r.message.id);
    expect(v).toMatchObject({ index: 1, count: 2 });
    expect((await s.history()).map((m) => m.content)).toEqual(["q1", "a1", "q2", "a2 again"]);
  });

  it("refuses a message that is not the assistant's, and a role in the answer, writing nothing", async () => {
    const { s, msgs, path } = await chat();
    const before = await dumpOf(path);
    const e = await s.regenerate(msgs[2]!.id, { content: "x" }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ValidationError);
    expect(e).toMatchObject({ field: "messageId" });
    const r = await s.regenerate(msgs[3]!.id, { role: "user", content: "x" } as never).catch((x: unknown) => x);
    expect(r).toBeInstanceOf(ValidationError);
    expect(r).toMatchObject({ field: "answer" });
    const bad = await s.regenerate(msgs[3]!.id, { content: { n: Number.NaN } }).catch((x: unknown) => x);
    expect(bad).toMatchObject({ field: "answer.content.n" });
    expect(await dumpOf(path)).toEqual(before);
  });
});
