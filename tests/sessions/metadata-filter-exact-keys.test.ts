// listCheckpoints({ metadata }) matches keys exactly as stored: a key with spaces around it is its own key, never
// trimmed into another (which returned checkpoints whose metadata did not match), and can be found.
import { expect, it } from "vitest";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

it("keys that differ only by spaces are different keys, and a padded key is found", async () => {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  await s.checkpoint({ name: "A", metadata: { k: "v", " k": "w" } });
  await s.checkpoint({ name: "B", metadata: { k: "w" } });
  await s.checkpoint({ name: "C", metadata: { "k\u00a0": "v" } });
  await s.checkpoint({ name: "D", metadata: { " k ": "v" } });
  const names = async (metadata: Record<string, string>) => (await fp.listCheckpoints({ userId: "u", metadata })).items.map((c) => c.name);

  expect(await names({ k: "v", " k": "w" })).toEqual(["A"]);
  expect(await names({ "k\u00a0": "v" })).toEqual(["C"]);
  expect(await names({ " k ": "v" })).toEqual(["D"]);
  expect(await names({ k: "v" })).toEqual(["A"]);
  expect(await names({ k: "w" })).toEqual(["B"]);
});

it("an empty key is a key like any other", async () => {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  await s.checkpoint({ name: "E", metadata: { "": "x" } });
  await s.checkpoint({ name: "F", metadata: { k: "x" } });
  expect((await fp.listCheckpoints({ userId: "u", metadata: { "": "x" } })).items.map((c) => c.name)).toEqual(["E"]);
});
