// What an imported document's events and unfinished calls become: an event of a kind no version writes is refused
// (the timeline would show it as a kind its type does not have), an early version's "branch" event still imports, and
// a call exported while running imports as one whose outcome is unknown, which resolveToolCall settles.
import { describe, expect, it } from "vitest";
import type { SessionExport } from "../../src/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

async function exported() {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  const start = await s.checkpoint({ name: "start" });
  const root = (await s.info()).currentBranchId;
  await s.append({ role: "user", content: "hi" });
  await s.recordToolCall({ tool: "t", args: { a: 1 }, result: 1 });
  await s.rollback(start.id);
  await s.switchBranch(root);
  const doc = JSON.parse(JSON.stringify(await fp.exportSession(s.id, { userId: "u" }))) as SessionExport;
  expect(doc.events.map((e) => e.kind)).toContain("switch");
  return { doc, start };
}

describe("an imported document", () => {
  it("with an event of a kind no version writes is refused, nothing written; a 'branch' event imports", async () => {
    const { doc } = await exported();
    const into = dbs.open().fp;
    const bogus = structuredClone(doc);
    bogus.events[0]!.kind = "bogus";
    const error = await rejectionOf(into.importSession(bogus, { userId: "u" }));
    expect(error).toMatchObject({ name: "ValidationError", code: "VALIDATION_ERROR" });
    expect((error as { field: string }).field).toMatch(/^document\.events/);
    expect((await into.listSessions({ userId: "u" })).items).toEqual([]);

    const early = structuredClone(doc);
    early.events[0]!.kind = "branch";
    const s = await into.importSession(early, { userId: "u" });
    expect((await s.timeline()).items.map((i) => i.kind)).toContain("branch");
  });

  it("with a call that has no completion imports it as unknown; resolveToolCall settles it", async () => {
    const { doc, start } = await exported();
    const tool = doc.entries.find((e) => e.kind === "tool")!;
    const open = structuredClone(doc);
    open.entries.find((e) => e.id === tool.id)!.completion = null;
    const s = await dbs.open().fp.importSession(open, { userId: "u" });
    const moved = await s.rollback(start.id);
    expect(moved.unknown.map((t) => t.id)).toEqual([tool.id]);
    expect((await s.resolveToolCall(tool.id, { status: "succeeded", result: null })).status).toBe("succeeded");
    expect((await s.rollback(start.id)).unknown).toEqual([]);
  });
});
