// refuseIrreversible over calls a clone holds but never ran in its database: the refusal names them as calls it cannot
// replay, not as calls it cannot undo (their tool has an undo), and the irreversible ones apart.
import { expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

it("a clone's unapplied calls are named as calls the move cannot replay, and it changes nothing", async () => {
  const world = new Set<string>();
  const put = defineTool({
    name: "put",
    run: async ({ k }: { k: string }) => void world.add(k),
    undo: async ({ args }) => void world.delete(args.k),
  });
  const mark = defineTool({ name: "mark", run: async ({ k }: { k: string }) => void world.add(k) });
  const { fp } = dbs.open({ tools: [put, mark] as never[] });
  const s = await fp.createSession({ userId: "ann" });
  await s.append({ role: "user", content: "q" });
  const before = await s.checkpoint({ name: "before" });
  await s.invoke("put", { k: "A" });
  const copy = await fp.clone(s.id, { userId: "ann" });
  const start = (await copy.info()).currentBranchId;
  await copy.rollback((await copy.listCheckpoints({ name: "before" })).items[0]!.id);
  const at = await copy.info();

  const refused = await rejectionOf(copy.switchBranch(start, { refuseIrreversible: true }));
  expect(refused).toMatchObject({ code: "IRREVERSIBLE" });
  expect(refused.message).toMatch(/1 tool call\(s\) it cannot replay, never applied in this database \(put tc_\S+\)/);
  expect(refused.message).not.toMatch(/cannot undo/);
  expect((await copy.info()).currentBranchId).toBe(at.currentBranchId);

  // On the source, an irreversible call passed is named as one the move cannot undo.
  await s.invoke("mark", { k: "B" });
  const kept = await rejectionOf(s.rollback(before.id, { refuseIrreversible: true }));
  expect(kept.message).toMatch(/tool call\(s\) it cannot undo, irreversible/);
  expect(kept.message).not.toMatch(/cannot replay/);
});
