// Checkpoint expiry: `expiresIn` takes ms or "30s" / "15m" / "2h" / "7d"; an expired checkpoint is gone from reads.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NotFoundError, ValidationError, type Forkpoint } from "../../src/index.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let fp: Forkpoint;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "forkpoint-expiry-"));
  fp = openForkpoint({ path: join(dir, "db.sqlite") });
});
afterEach(async () => {
  await fp.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("checkpoint expiry", () => {
  it("sets expiresAt from a duration string or milliseconds", async () => {
    const s = await fp.createSession({ userId: "u" });
    for (const [input, ms] of [
      ["30s", 30_000],
      ["15m", 900_000],
      ["2h", 7_200_000],
      ["7d", 604_800_000],
      [1234, 1234],
    ] as const) {
      // The expiry counts from a clock reading taken during the call, the creation time from another: they differ by
      // at most the call's duration (plus 1 ms of rounding to whole milliseconds), however loaded the machine is.
      const started = performance.now();
      const cp = await s.checkpoint({ expiresIn: input });
      const slack = performance.now() - started + 1;
      const lifetime = cp.expiresAt!.getTime() - cp.createdAt.getTime();
      expect(Math.abs(lifetime - ms), `${input}: expires ${lifetime} ms after creation`).toBeLessThanOrEqual(slack);
    }
    expect((await s.checkpoint()).expiresAt).toBeNull();
  });

  it("refuses durations that are not positive", async () => {
    const s = await fp.createSession({ userId: "u" });
    for (const bad of ["soon", "-5m", 0, -1, "", Number.NaN]) {
      await expect(s.checkpoint({ expiresIn: bad as string })).rejects.toBeInstanceOf(ValidationError);
    }
  });

  it("takes a number or a string, in its type as at run time", async () => {
    const s = await fp.createSession({ userId: "u" });
    // @ts-expect-error an object is not a duration (npm run lint fails if the type lets it through)
    await expect(s.checkpoint({ expiresIn: { ms: 5 } })).rejects.toBeInstanceOf(ValidationError);
  });

  it("refuses a duration whose expiry a Date could not hold, and keeps the longest accepted one round-trippable", async () => {
    const s = await fp.createSession({ userId: "u" });
    const e = await s.checkpoint({ expiresIn: 1e20 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ValidationError);
    expect((e as Error).message).toContain("expiresIn");
    expect((await s.summary()).checkpoints).toBe(0);
    const far = await s.checkpoint({ name: "far", expiresIn: 1000 * 365.25 * 24 * 3600 * 1000 });
    expect(Number.isNaN(far.expiresAt!.getTime())).toBe(false);
    const doc = await fp.exportSession(s.id, { userId: "u" });
    const other = openForkpoint({ path: ":memory:" });
    try {
      const copy = await other.importSession(doc, { userId: "u" });
      expect(JSON.stringify(await other.exportSession(copy.id, { userId: "u" }))).toBe(JSON.stringify(doc));
    } finally {
      await other.close();
    }
  });

  it("hides an expired checkpoint from listings, restore and rollback", async () => {
    const s = await fp.createSession({ userId: "u" });
    const cp = await s.checkpoint({ name: "short", expiresIn: 1 });
    await new Promise((r) => setTimeout(r, 5));
    expect((await fp.listCheckpoints({ userId: "u" })).items).toEqual([]);
    await expect(s.restore(cp.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(s.rollback(cp.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});
