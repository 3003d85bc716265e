// A program awaiting forkpoint calls one after another still gets its timers run: SQLite's units end synchronously,
// and without a turn of the event loop now and then such a loop would run only microtasks, forever.
import { expect, it } from "vitest";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

it("a loop of awaited appends lets a timer set before it fire, and stops on it", async () => {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  let stop = false;
  setTimeout(() => (stop = true), 0);
  let appended = 0;
  // Bounded, so that the test ends when the loop starves: far more appends than 10 ms of them.
  while (!stop && appended < 20_000) {
    await s.append({ role: "user", content: `m${appended}` });
    appended++;
  }
  expect(stop).toBe(true);
  expect(appended).toBeLessThan(20_000);
  expect((await s.history({ limit: 1 })).at(-1)?.content).toBe(`m${appended - 1}`);
});
