// Rollback and edit read where they fork in one lookup when the entries around the fork point are the branch's own,
// and through the lineage when they are its parent's. Both paths: the right base, and damage to it refused.
import { describe, expect, it } from "vitest";
import { IntegrityError } from "../../src/index.js";
import { tempDatabases, withRawDatabase } from "../helpers.js";
import { dumpOf, onPostgres, sqlOn } from "../fixtures/backend.js";

const dbs = tempDatabases();

/**
 * Root branch: m1..m4 with checkpoints after m1 (position 1: the entry before is genesis) and after m3.
 * Then a branch forked after m2 with n3, n4: checkpoints after n3 (the entry before is the parent's m2) and n4.
 */
async function tree() {
  const { fp, path } = dbs.open();
  const s = await fp.createSession({ userId: "ann" });
  const say = async (text: string) => (await s.append({ role: "user", content: text }))[0]!;
  const m1 = await say("m1");
  const atM1 = await s.checkpoint({ name: "m1" });
  const m2 = await say("m2");
  const atM2 = await s.checkpoint({ name: "m2" });
  const m3 = await say("m3");
  const atM3 = await s.checkpoint({ name: "m3" });
  await say("m4");
  await s.rollback(atM2.id);
  const n3 = await say("n3");
  const atN3 = await s.checkpoint({ name: "n3" });
  const n4 = await say("n4");
  const atN4 = await s.checkpoint({ name: "n4" });
  return { fp, path, s, m: { m1, m2, m3, n3, n4 }, cp: { atM1, atM3, atN3, atN4 } };
}

const texts = (h: { content: unknown }[]) => h.map((m) => m.content);

describe("rollback forks at the checkpoint's entry, read in one lookup or through the lineage", () => {
  it.each([
    ["atM1", ["m1"]],
    ["atM3", ["m1", "m2", "m3"]],
    ["atN3", ["m1", "m2", "n3"]],
    ["atN4", ["m1", "m2", "n3", "n4"]],
  ] as const)("rollback to %s starts with exactly that history", async (name, expected) => {
    const { s, cp } = await tree();
    const { branch } = await s.rollback(cp[name].id);
    expect(branch.head).toBe(expected.length);
    expect(texts(await s.history())).toEqual(expected);
  });

  it.each([
    ["atM3", "m3", "content"],
    ["atM3", "m2", "hash"],
    ["atN4", "n4", "content"],
    ["atN4", "n3", "hash"],
    ["atN3", "n3", "content"],
    ["atN3", "m2", "hash"],
  ] as const)("rollback to %s refuses a damaged %s (%s) and changes nothing", async (name, message, column) => {
    const { fp, path, s, m, cp } = await tree();
    await fp.close();
    const value = column === "content" ? '"tampered"' : Buffer.alloc(32);
    expect(await sqlOn(path, `UPDATE entries SET ${column} = $1 WHERE id = $2 RETURNING 1`, [value, m[message].id])).toHaveLength(1);
    const before = await dumpOf(path);
    const again = await dbs.open({ path }).fp.getSession(s.id, { userId: "ann" });
    await expect(again.rollback(cp[name].id)).rejects.toBeInstanceOf(IntegrityError);
    expect(await dumpOf(path)).toEqual(before);
  });
});

describe("rollback to a checkpoint whose branch row is gone", () => {
  it("is damage (IntegrityError), not an unknown checkpoint, and changes nothing", async () => {
    const { fp, path, s, cp } = await tree();
    const { branchId } = await s.restore(cp.atN4.id).then((r) => r.checkpoint);
    await fp.close();
    // Past the foreign keys that refer to it, turned off for this connection.
    if (onPostgres) {
      const deleted = await sqlOn(
        path,
        `SET session_replication_role = replica; DELETE FROM branches WHERE id = '${branchId}' RETURNING 1`,
      );
      expect(deleted).toHaveLength(1);
    } else
      withRawDatabase(path, (db) => {
        db.pragma("foreign_keys = OFF");
        expect(db.prepare("DELETE FROM branches WHERE id = ?").run(branchId).changes).toBe(1);
      });
    const before = await dumpOf(path);
    const again = await dbs.open({ path }).fp.getSession(s.id, { userId: "ann" });
    await expect(again.rollback(cp.atN4.id)).rejects.toBeInstanceOf(IntegrityError);
    expect(await dumpOf(path)).toEqual(before);
  });
});

describe("edit forks just before the message, read in one lookup or through the lineage", () => {
  // m3 and n3 are already two versions of position 3 (n3's branch forks after m2).
  it.each([
    ["m1", [], ["m1"]],
    ["m3", ["m1", "m2"], ["m3", "n3"]],
    ["n3", ["m1", "m2"], ["m3", "n3"]],
    ["n4", ["m1", "m2", "n3"], ["n4"]],
  ] as const)("an edit of %s keeps the history before it and is the newest version", async (message, before, earlier) => {
    const { s, m } = await tree();
    const { branch, message: edited } = await s.edit(m[message].id, { role: "user", content: "edited" });
    expect(branch.forkPosition).toBe(before.length);
    expect(texts(await s.history())).toEqual([...before, "edited"]);
    const versions = await s.versions(edited.id);
    expect(versions.versions.map((v) => v.message.id)).toEqual([...earlier.map((k) => m[k].id), edited.id]);
  });
});
