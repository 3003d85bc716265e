// State versions: each stored state keeps the version it was written under; reads migrate, exports and hashes keep it.
import { describe, expect, it } from "vitest";
import { StateVersionError, ValidationError, type JsonValue } from "../../src/index.js";
import { dumpOf } from "../fixtures/backend.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const toV2 = { 1: (s: JsonValue) => ({ ...(s as object), tags: [] }) };
const toV3 = { ...toV2, 2: (s: JsonValue) => ({ ...(s as object), v3: true }) };

describe("state versions", () => {
  it("reads older states through the migration chain and never rewrites them", async () => {
    const old = dbs.open();
    const s1 = await old.fp.createSession({ userId: "u" });
    await s1.setState({ n: 1 });
    const cp1 = await s1.checkpoint({ name: "v1" });
    await old.fp.close();

    const { fp } = dbs.open({ path: old.path, stateVersion: 3, migrateState: toV3 });
    const s = await fp.getSession(s1.id, { userId: "u" });
    expect(await s.getState()).toEqual({ n: 1, tags: [], v3: true });
    let prev: JsonValue = null;
    expect(await s.setState((p) => ((prev = p), { ...(p as object), n: 2 }))).toEqual({ n: 2, tags: [], v3: true });
    expect(prev).toEqual({ n: 1, tags: [], v3: true });
    const cp3 = await s.checkpoint({ name: "v3" });
    expect((await s.restore(cp1.id)).state).toEqual({ n: 1, tags: [], v3: true });
    await s.rollback(cp1.id);
    expect(await s.getState()).toEqual({ n: 1, tags: [], v3: true });
    expect((await fp.verify()).ok).toBe(true);

    // The recorded states: the old one as it was (no version in the export), the new one with its version.
    const doc = await fp.exportSession(s.id, { userId: "u" });
    const states = doc.states.map((st) => ({ value: st.value, version: st.version }));
    expect(states).toContainEqual({ value: { n: 1 }, version: undefined });
    expect(states).toContainEqual({ value: { n: 2, tags: [], v3: true }, version: 3 });
    await fp.close();

    // An opener at version 1 reads the old state but refuses the newer one.
    const v1 = dbs.open({ path: old.path });
    const back = await v1.fp.getSession(s1.id, { userId: "u" });
    expect(await back.getState()).toEqual({ n: 1 });
    const err = await rejectionOf(back.restore(cp3.id));
    expect(err).toBeInstanceOf(StateVersionError);
    expect(err).toMatchObject({ code: "STATE_VERSION_UNKNOWN", stateVersion: 3 });
  });

  it("an import keeps each state's version; the importing side migrates on read and the copy verifies", async () => {
    const a = dbs.open({ stateVersion: 2, migrateState: toV2 });
    const s = await a.fp.createSession({ userId: "u" });
    await s.setState({ n: 1 });
    await s.checkpoint();
    const doc = await a.fp.exportSession(s.id, { userId: "u" });
    expect(doc.states).toEqual([expect.objectContaining({ value: { n: 1 }, version: 2 })]);

    const b = dbs.open({ stateVersion: 3, migrateState: toV3 });
    const imported = await b.fp.importSession(doc, { userId: "v" });
    expect(await imported.getState()).toEqual({ n: 1, v3: true });
    expect((await b.fp.verify()).ok).toBe(true);

    // A version is covered by the hash: a document claiming another version for the same body is refused.
    const c = dbs.open({ stateVersion: 3, migrateState: toV3 });
    const forged = structuredClone(doc);
    forged.states[0]!.version = 3;
    expect(await rejectionOf(c.fp.importSession(forged, { userId: "v" }))).toMatchObject({ code: "INTEGRITY_ERROR" });
    expect((await c.fp.listSessions({ userId: "v" })).items).toEqual([]);
  });

  it("an import of states newer than the importer's stateVersion is refused, writing nothing", async () => {
    const a = dbs.open({ stateVersion: 3, migrateState: toV3 });
    const s = await a.fp.createSession({ userId: "u" });
    await s.setState({ n: 1 });
    await s.checkpoint({ name: "at v3" });
    const doc = await a.fp.exportSession(s.id, { userId: "u" });

    const b = dbs.open({ stateVersion: 2, migrateState: toV2 });
    const before = await dumpOf(b.path);
    const err = await rejectionOf(b.fp.importSession(doc, { userId: "v" }));
    expect(err).toBeInstanceOf(StateVersionError);
    expect(err).toMatchObject({ code: "STATE_VERSION_UNKNOWN", stateVersion: 3 });
    expect(err.message).toContain("document.states[0]");
    expect(await dumpOf(b.path)).toEqual(before);
    expect((await b.fp.listSessions({ userId: "v" })).items).toEqual([]);
    // An importer at that version (or later) takes it.
    const c = dbs.open({ stateVersion: 3, migrateState: toV3 });
    expect(await (await c.fp.importSession(doc, { userId: "v" })).getState()).toEqual({ n: 1 });
  });

  it("the same body under two versions is two snapshots, each verifying", async () => {
    const p = dbs.path();
    const one = dbs.open({ path: p });
    const s = await one.fp.createSession({ userId: "u" });
    await s.setState({ same: true });
    await one.fp.close();
    const { fp } = dbs.open({ path: p, stateVersion: 2, migrateState: { 1: (x: JsonValue) => x } });
    const s2 = await fp.getSession(s.id, { userId: "u" });
    await s2.setState({ same: true });
    const doc = await fp.exportSession(s.id, { userId: "u" });
    expect(doc.states.map((st) => st.version ?? 1).sort()).toEqual([1, 2]);
    expect((await fp.verify()).ok).toBe(true);
  });

  it("a missing step or a failing one is a typed error; the stored state is untouched", async () => {
    const old = dbs.open();
    const s1 = await old.fp.createSession({ userId: "u" });
    await s1.setState({ n: 1 });
    await old.fp.close();

    const gap = dbs.open({ path: old.path, stateVersion: 3, migrateState: { 2: toV3[2] } });
    const s = await gap.fp.getSession(s1.id, { userId: "u" });
    expect(await rejectionOf(s.getState())).toMatchObject({ code: "STATE_MIGRATION_MISSING", stateVersion: 1 });
    expect(await rejectionOf(s.setState((p) => p))).toMatchObject({ code: "STATE_MIGRATION_MISSING" });
    await gap.fp.close();

    const failing = dbs.open({
      path: old.path,
      stateVersion: 2,
      migrateState: {
        1: () => {
          throw new Error("bad step");
        },
      },
    });
    const f = await failing.fp.getSession(s1.id, { userId: "u" });
    const err = await rejectionOf(f.getState());
    expect(err).toMatchObject({ code: "STATE_MIGRATION_FAILED" });
    expect(((err as Error).cause as Error).message).toBe("bad step");
    await failing.fp.close();

    const v1 = dbs.open({ path: old.path });
    expect(await (await v1.fp.getSession(s1.id, { userId: "u" })).getState()).toEqual({ n: 1 });
  });

  it("validates the options at open", () => {
    const bad: unknown[] = [
      { stateVersion: 0 },
      { stateVersion: 1.5 },
      { stateVersion: 2, migrateState: { 2: (s: JsonValue) => s } },
      { stateVersion: 2, migrateState: { 1: "no" } },
      { stateVersion: 2, migrateState: { one: (s: JsonValue) => s } },
    ];
    for (const options of bad) {
      expect(() => dbs.open(options as never), JSON.stringify(options)).toThrow(ValidationError);
    }
  });
});

describe("state versions per session", () => {
  it("a session created with its own schema writes its states under it; the Forkpoint's other sessions keep theirs", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u", title: "v2", stateVersion: 2, migrateState: toV2 });
    const plain = await fp.createSession({ userId: "u" });
    await s.setState({ n: 1 });
    await plain.setState({ n: 1 });
    expect((await s.info()).title).toBe("v2");
    expect((await fp.exportSession(s.id, { userId: "u" })).states.map((st) => st.version)).toEqual([2]);
    expect((await fp.exportSession(plain.id, { userId: "u" })).states.map((st) => st.version)).toEqual([undefined]);
    // A handle on the same session without the options reads under the Forkpoint's schema (version 1): refused.
    const later = await fp.getSession(s.id, { userId: "u" });
    expect(await rejectionOf(later.getState())).toMatchObject({ code: "STATE_VERSION_UNKNOWN", stateVersion: 2 });
    const again = await fp.getSession(s.id, { userId: "u", stateVersion: 2, migrateState: toV2 });
    expect(await again.getState()).toEqual({ n: 1 });
  });

  it("a handle's schema migrates getState, restore, and the states a rollback and an edit start from", async () => {
    const { fp } = dbs.open();
    const created = await fp.createSession({ userId: "u" });
    await created.append({ role: "user", content: "hi" });
    await created.setState({ n: 1 });
    const cp1 = await created.checkpoint({ name: "v1" });
    const [m2] = await created.append({ role: "user", content: "again" });

    const s = await fp.getSession(created.id, { userId: "u", stateVersion: 3, migrateState: toV3 });
    const migrated = { n: 1, tags: [], v3: true };
    expect(await s.getState()).toEqual(migrated);
    expect((await s.restore(cp1.id)).state).toEqual(migrated);
    await s.edit(m2!.id, { content: "edited" });
    expect(await s.getState()).toEqual(migrated);
    await s.setState((prev) => ({ ...(prev as object), n: 2 }));
    await s.rollback(cp1.id);
    expect(await s.getState()).toEqual(migrated);
    expect(await s.setState({ n: 3 })).toEqual({ n: 3 });
    const versions = (await fp.exportSession(s.id, { userId: "u" })).states.map((st) => st.version ?? 1);
    expect(versions.sort()).toEqual([1, 3, 3]);

    // The Forkpoint's own handles are unaffected: version 1, and a version-3 state is beyond them.
    expect(await created.restore(cp1.id).then((r) => r.state)).toEqual({ n: 1 });
    expect(await rejectionOf(created.getState())).toMatchObject({ code: "STATE_VERSION_UNKNOWN", stateVersion: 3 });
  });

  it("overrides the Forkpoint's schema, in either direction", async () => {
    const p = dbs.path();
    const one = dbs.open({ path: p });
    const s1 = await one.fp.createSession({ userId: "u" });
    await s1.setState({ n: 1 });
    await one.fp.close();

    const { fp } = dbs.open({ path: p, stateVersion: 2, migrateState: toV2 });
    expect(await (await fp.getSession(s1.id, { userId: "u" })).getState()).toEqual({ n: 1, tags: [] });
    const v1 = await fp.getSession(s1.id, { userId: "u", stateVersion: 1 });
    expect(await v1.getState()).toEqual({ n: 1 });
    const failing = await fp.getSession(s1.id, {
      userId: "u",
      stateVersion: 2,
      migrateState: {
        1: () => {
          throw new Error("per-session step");
        },
      },
    });
    const err = await rejectionOf(failing.getState());
    expect(err).toMatchObject({ code: "STATE_MIGRATION_FAILED" });
    expect(((err as Error).cause as Error).message).toBe("per-session step");
  });

  it("validates the options as at open, naming the same fields, and writes nothing", async () => {
    const { fp } = dbs.open();
    const existing = await fp.createSession({ userId: "u" });
    const bad: [unknown, string][] = [
      [{ stateVersion: 0 }, "stateVersion"],
      [{ stateVersion: 1.5 }, "stateVersion"],
      [{ stateVersion: 2, migrateState: { 2: (s: JsonValue) => s } }, "migrateState.2"],
      [{ stateVersion: 2, migrateState: { 1: "no" } }, "migrateState.1"],
      [{ stateVersion: 2, migrateState: { one: (s: JsonValue) => s } }, "migrateState.one"],
      [{ migrateState: { 1: (s: JsonValue) => s } }, "migrateState.1"],
    ];
    for (const [options, field] of bad) {
      const created = await rejectionOf(fp.createSession({ userId: "v", ...(options as object) }));
      expect(created, JSON.stringify(options)).toBeInstanceOf(ValidationError);
      expect(created).toMatchObject({ field });
      const got = await rejectionOf(fp.getSession(existing.id, { userId: "u", ...(options as object) }));
      expect(got, JSON.stringify(options)).toBeInstanceOf(ValidationError);
      expect(got).toMatchObject({ field });
    }
    expect((await fp.listSessions({ userId: "v" })).items).toEqual([]);
  });

  it("objects tracked through a handle with its own schema load after another handle's move or restore", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u", stateVersion: 2, migrateState: toV2 });
    const agent = { memory: ["one"] };
    const t = s.track(agent, { fields: ["memory"] });
    await t.save();
    const cp = await s.checkpoint();
    agent.memory.push("two");
    await t.save();
    const other = await fp.getSession(s.id, { userId: "u", stateVersion: 2, migrateState: toV2 });
    await other.rollback(cp.id);
    expect(agent).toEqual({ memory: ["one"] });
    agent.memory.push("unsaved");
    await other.restore(cp.id);
    expect(agent).toEqual({ memory: ["one"] });
  });

  it("a session with its own schema exports a document the same Forkpoint imports under that schema", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u", stateVersion: 2, migrateState: toV2 });
    await s.setState({ n: 1 });
    const doc = await fp.exportSession(s.id, { userId: "u" });
    await fp.deleteSession(s.id, { userId: "u" });
    // Under the Forkpoint's own schema (version 1) its states could never be read: refused, nothing written.
    expect(await rejectionOf(fp.importSession(doc, { userId: "u" }))).toMatchObject({ code: "STATE_VERSION_UNKNOWN" });
    expect((await fp.listSessions({ userId: "u" })).items).toEqual([]);
    const bad = await rejectionOf(fp.importSession(doc, { userId: "u", stateVersion: 0 }));
    expect(bad).toBeInstanceOf(ValidationError);
    expect(bad).toMatchObject({ field: "stateVersion" });
    expect((await fp.listSessions({ userId: "u" })).items).toEqual([]);
    const copy = await fp.importSession(doc, { userId: "u", stateVersion: 2, migrateState: toV2 });
    expect(await copy.getState()).toEqual({ n: 1 });
    await copy.setState({ n: 2 });
    expect((await fp.exportSession(copy.id, { userId: "u" })).states.map((st) => st.version)).toEqual([2, 2]);
    expect((await fp.verify({ sessionId: copy.id })).ok).toBe(true);
  });
});
