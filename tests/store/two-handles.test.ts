// Two handles on one SQLite file in one process, written through at once and un-awaited: units of work never hold a
// transaction open across an await, so neither waits in SQLite's busy loop for the other, and nothing is lost.
import { describe, expect, it } from "vitest";
import { tempDatabases } from "../helpers.js";

const db = tempDatabases();

describe("two handles on one file in one process", () => {
  it("write at once, un-awaited, into the same session and their own: nothing stalls, nothing is lost", async () => {
    const file = db.path();
    const a = db.open({ path: file, busyTimeoutMs: 0 }).fp;
    const b = db.open({ path: file, busyTimeoutMs: 0 }).fp;
    const shared = await a.createSession({ userId: "u" });
    const viaB = await b.getSession(shared.id, { userId: "u" });
    const own = [await a.createSession({ userId: "u" }), await b.createSession({ userId: "u" })];
    const calls: Promise<unknown>[] = [];
    // busyTimeoutMs 0: a handle that found the other's transaction open would fail at once with BUSY.
    for (let i = 0; i < 100; i++) {
      calls.push(shared.append({ role: "user", content: `a${i}` }));
      calls.push(viaB.append({ role: "user", content: `b${i}` }));
      calls.push(own[i % 2]!.setState({ i }));
      if (i % 10 === 0) calls.push(shared.checkpoint({ name: `cp${i}` }), viaB.checkpoint({ name: `cp${i}b` }));
    }
    await Promise.all(calls);
    const history = await shared.history();
    expect(history).toHaveLength(200);
    expect(history.map((m) => m.position)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(history.filter((m) => String(m.content).startsWith("a")).map((m) => m.content)).toEqual(
      Array.from({ length: 100 }, (_, i) => `a${i}`),
    );
    expect((await a.listCheckpoints({ userId: "u", sessionId: shared.id, limit: 100 })).items).toHaveLength(20);
    expect(await own[0]!.getState()).toEqual({ i: 98 });
    expect(await own[1]!.getState()).toEqual({ i: 99 });
    expect((await a.verify()).ok).toBe(true);
  });
});
