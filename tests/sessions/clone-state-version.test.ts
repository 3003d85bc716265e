// clone() of a session written under its own state schema: the copy's handle reads and writes under the schema given.
import { expect, it } from "vitest";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

it("a clone given stateVersion / migrateState reads the copied states as getSession would", async () => {
  const { fp } = dbs.open();
  const schema = { stateVersion: 2, migrateState: { 1: (v: unknown) => ({ ...(v as object), migrated: true }) } };
  const s = await fp.createSession({ userId: "u", ...schema });
  await s.setState({ a: 1 });

  const copy = await fp.clone(s.id, { userId: "u", ...schema });
  expect(await copy.getState()).toEqual({ a: 1 });
  await copy.setState({ a: 2 });
  expect(await (await fp.getSession(copy.id, { userId: "u", ...schema })).getState()).toEqual({ a: 2 });
  // Without it, the copy is read under the Forkpoint's schema (version 1), which cannot read version 2.
  const plain = await fp.clone(s.id, { userId: "u" });
  expect(await rejectionOf(plain.getState())).toMatchObject({ code: "STATE_VERSION_UNKNOWN" });
  // Bad options are refused as anywhere else, nothing copied.
  const before = (await fp.listSessions({ userId: "u" })).items.length;
  expect(await rejectionOf(fp.clone(s.id, { userId: "u", stateVersion: 0 }))).toMatchObject({ code: "VALIDATION_ERROR" });
  expect((await fp.listSessions({ userId: "u" })).items.length).toBe(before);
});
