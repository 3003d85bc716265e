// A move that passes calls it will not replay because they never ran in this database (a clone's, an import's): the
// text names them as not replayed, never as irreversible calls that stay applied (their tool has an undo, and nothing
// of theirs is applied here).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { defineTool, openForkpoint } from "../../src/index.js";
import { runInProcess } from "./in-process.js";

const dir = mkdtempSync(join(tmpdir(), "forkpoint-cli-not-replayed-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("a clone's calls a plan and a switch pass are listed as not replayed, not as irreversible", async () => {
  const db = join(dir, "clone.db");
  const world = new Set<string>();
  const put = defineTool({
    name: "put",
    run: async ({ k }: { k: string }) => void world.add(k),
    undo: async ({ args }) => void world.delete(args.k),
  });
  const fp = openForkpoint({ path: db, tools: [put] });
  const s = await fp.createSession({ userId: "ann" });
  await s.append({ role: "user", content: "q" });
  await s.checkpoint({ name: "before" });
  await s.invoke("put", { k: "A" });
  const copy = await fp.clone(s.id, { userId: "ann" });
  const { items } = await copy.listCheckpoints({ name: "before" });
  const start = (await copy.info()).currentBranchId;
  await copy.rollback(items[0]!.id);
  await fp.close();

  for (const verb of [
    ["plan", copy.id, "--branch", start],
    ["switch", copy.id, start],
  ]) {
    const r = await runInProcess(["--db", db, ...verb, "-u", "ann"]);
    expect([r.status, r.stderr]).toEqual([0, ""]);
    const text = r.stdout.split("\n");
    expect(text).toContainEqual("not replayed  1");
    expect(text).toContainEqual(expect.stringMatching(/^  put tc_\S+ \{"k":"A"\}$/));
    expect(r.stdout).not.toMatch(/irreversible/);
  }
});
