// Two atomic blocks at once on one branch, from two openers, both failing: neither block's call comes back.
import { describe, expect, it } from "vitest";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { worldPut } from "../fixtures/world-put.js";

const dbs = tempDatabases();
const { world, put } = worldPut();

/** A promise and its resolver: the two blocks take turns. */
function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe("two failing atomic blocks at once", () => {
  it("the one that began second, among the first one's writes, rolls back to before them", async () => {
    world.clear();
    const { fp, path } = dbs.open({ tools: [put] });
    const fp2 = dbs.open({ tools: [put], path }).fp;
    const s = await fp.createSession({ userId: "u" });
    const t = await fp2.getSession(s.id, { userId: "u" });
    await s.append({ role: "user", content: "start" });
    const tWrote = latch();
    const sWrote = latch();
    const tFailed = latch();
    // T begins first and writes; S begins after T's call (its checkpoint holds it) and writes; T fails, then S.
    const first = t.atomic(async () => {
      await t.invoke("put", { k: "T" });
      tWrote.open();
      await sWrote.opened;
      throw new Error("T failed");
    });
    const second = (async () => {
      await tWrote.opened;
      return s.atomic(
        async () => {
          await s.invoke("put", { k: "S" });
          sWrote.open();
          await tFailed.opened;
          throw new Error("S failed");
        },
        { waitMs: 10_000 },
      );
    })();
    expect((await rejectionOf(first)).message).toBe("T failed");
    tFailed.open();
    expect((await rejectionOf(second)).message).toBe("S failed");
    expect([...world.keys()]).toEqual([]);
    const applied = (await s.toolTrack()).filter((c) => c.status === "succeeded").map((c) => (c.args as { k: string }).k);
    expect(applied).toEqual([]);
    expect((await s.history()).map((m) => m.content)).toEqual(["start"]);
  });
});
