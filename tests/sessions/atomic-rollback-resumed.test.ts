// A failed atomic block's rollback stopped midway (the process closed or killed during its undo) is finished by recovery.
import { describe, expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const world = new Map<string, string>();
let undoStarted = (): void => undefined;
let slowUndo = true;
const slow = defineTool<{ k: string }, { k: string }>({
  name: "slow",
  run: async ({ k }) => {
    world.set(k, "1");
    return { k };
  },
  undo: async ({ args }, { signal }) => {
    undoStarted();
    if (slowUndo) await new Promise((done) => signal?.addEventListener("abort", done, { once: true }));
    world.delete(args.k);
  },
});

describe("a failed block's rollback stopped midway", () => {
  it("is finished by recover(): the block's writes are gone and the session takes writes again", async () => {
    world.clear();
    slowUndo = true;
    const { fp, path } = dbs.open({ tools: [slow] });
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "q" });
    const started = new Promise<void>((resolve) => (undoStarted = resolve));
    const block = s
      .atomic(async () => {
        await s.invoke("slow", { k: "blk" });
        await s.append({ role: "assistant", content: "half" });
        throw new Error("block failed");
      })
      .catch((e: unknown) => e);
    await started;
    await fp.close();
    await block;

    slowUndo = false;
    const { fp: again } = dbs.open({ path, tools: [slow], leaseMs: 100 });
    await new Promise((r) => setTimeout(r, 250));
    const recovered = await again.recover();
    expect(recovered.failed).toEqual([]);
    const t = await again.getSession(s.id, { userId: "u" });
    await t.append({ role: "user", content: "next" });
    expect((await t.history()).map((m) => m.content)).toEqual(["q", "next"]);
    expect(world.has("blk")).toBe(false);
  });
});
