// Ids sort in creation order within a process whatever the wall clock does (steps back, stands still).
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { newId } from "../../src/models/ids.js";
import { makeTempDir, removeDir } from "../helpers.js";

/** Makes Date.now return each of `times` in turn (then the last one). */
function clockReading(times: number[]): void {
  let i = 0;
  vi.spyOn(Date, "now").mockImplementation(() => times[Math.min(i++, times.length - 1)]!);
}

const sortedCopy = (ids: string[]) => [...ids].sort();

afterEach(() => {
  vi.restoreAllMocks();
});

describe("newId", () => {
  it("keeps sorting in creation order when the clock steps back", () => {
    const t = 1_900_000_000_000;
    clockReading([t, t + 5, t - 60_000, t - 60_000, t - 1, t + 5, t + 5, t + 6, t - 3_600_000]);
    const ids = Array.from({ length: 9 }, () => newId("msg"));
    expect(sortedCopy(ids)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("keeps sorting when more ids are made in one millisecond than its counter holds", () => {
    const t = 1_950_000_000_000;
    clockReading([t]);
    // The counter's 3 base-36 digits hold 46,656 ids per millisecond: two and a half times that.
    const ids = Array.from({ length: 36 ** 3 * 2.5 }, () => newId("cp"));
    expect(sortedCopy(ids)).toEqual(ids);
    expect(new Set(ids.map((id) => id.slice(0, 15))).size).toBe(ids.length);
    // The time part rolled forward, then the clock caught up: later ids still sort after.
    clockReading([t + 1, t + 2, t + 3]);
    const later = [newId("cp"), newId("cp"), newId("cp"), newId("cp")];
    expect(sortedCopy([...ids, ...later])).toEqual([...ids, ...later]);
  });
});

describe("the engine's ids under a clock that steps back", () => {
  it("messages, checkpoints and sessions made after the step sort after those made before", async () => {
    const dir = makeTempDir();
    const fp = openForkpoint({ path: path.join(dir, "clock.db") });
    try {
      const t = 2_000_000_000_000;
      // Every id drawn reads the clock once; it runs an hour back halfway.
      let calls = 0;
      vi.spyOn(Date, "now").mockImplementation(() => (calls++ < 4 ? t + calls : t - 3_600_000 + calls));
      const s = await fp.createSession({ userId: "alice" });
      const messages = [];
      const checkpoints = [];
      for (let i = 0; i < 4; i++) {
        messages.push(...(await s.append({ role: "user", content: `m${i}` })));
        checkpoints.push(await s.checkpoint({ name: `c${i}` }));
      }
      const other = await fp.createSession({ userId: "alice" });
      expect(calls).toBeGreaterThan(4);
      expect(sortedCopy(messages.map((m) => m.id))).toEqual(messages.map((m) => m.id));
      expect(sortedCopy(checkpoints.map((c) => c.id))).toEqual(checkpoints.map((c) => c.id));
      expect(other.id > s.id).toBe(true);
      expect((await s.history()).map((m) => m.content)).toEqual(["m0", "m1", "m2", "m3"]);
      expect((await fp.verify()).ok).toBe(true);
    } finally {
      vi.restoreAllMocks();
      await fp.close();
      removeDir(dir);
    }
  });
});
