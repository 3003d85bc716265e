// Issue 32 (review 19): calls a files-only rollback took out of the world stay out when a later "both" rewind restores
// a checkpoint taken after it: its files do not hold them, and the conversation never asked for them again.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { appendLineTool, readOrNull } from "../fixtures/file-tools.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { onPostgres, openForkpoint, sqlOn } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
const file = (rel: string) => path.join(ws, rel);

beforeEach(() => {
  dir = makeTempDir("forkpoint-files-then-both-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [appendLineTool()] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

/** A session whose workspace log got L1 (checkpoint "L1"), then L2 (checkpoint "L2"), which a files rollback to "L1" set aside. */
async function l2SetAside(withStart: boolean) {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = withStart ? await s.checkpoint({ name: "start" }) : undefined;
  await s.invoke("append_line", { path: file("log"), line: "L1" });
  const withL1 = await s.checkpoint({ name: "L1" });
  await s.invoke("append_line", { path: file("log"), line: "L2" });
  const withL2 = await s.checkpoint({ name: "L2" });
  await s.rollback(withL1.id, { scope: "files" });
  return { s, start: start!, withL1, withL2 };
}

it("a checkpoint after a files rollback, restored by a both rewind: the calls it took away are not replayed", async () => {
  const { s, start } = await l2SetAside(true);
  expect(readOrNull(file("log"))).toBe("L1\n");
  const after = await s.checkpoint({ name: "after files rollback" });

  await s.rollback(start.id, { scope: "both" });
  expect(readOrNull(file("log"))).toBeNull();
  const back = await s.rollback(after.id, { scope: "both" });
  expect(readOrNull(file("log"))).toBe("L1\n");
  expect(back.replayed).toEqual([]);

  // The conversation can still ask for L2 again: a conversation move to the same point replays it.
  const again = await s.rollback(after.id, { scope: "conversation" });
  expect(again.replayed.map((t) => t.args)).toEqual([{ path: file("log"), line: "L2" }]);
  expect(readOrNull(file("log"))).toBe("L1\nL2\n");
});

it("the same with nothing moved in between: a both rewind to it keeps L2 out", async () => {
  const { s } = await l2SetAside(false);
  const after = await s.checkpoint({ name: "after files rollback" });
  await s.append({ role: "user", content: "go on" });
  const back = await s.rollback(after.id, { scope: "both" });
  expect(back.replayed).toEqual([]);
  expect(readOrNull(file("log"))).toBe("L1\n");
});

it("a both rewind that leaves such a call out sets it aside again: a checkpoint after it keeps it out too", async () => {
  const { s, start } = await l2SetAside(true);
  const after = await s.checkpoint({ name: "after files rollback" });
  // Replayed by a conversation move (it is applied again), then left out again by a both rewind.
  await s.rollback(after.id, { scope: "conversation" });
  expect(readOrNull(file("log"))).toBe("L1\nL2\n");
  const out = await s.rollback(after.id, { scope: "both" });
  expect(out.undone.map((t) => t.args)).toEqual([{ path: file("log"), line: "L2" }]);
  expect(readOrNull(file("log"))).toBe("L1\n");
  const later = await s.checkpoint({ name: "later" });

  await s.rollback(start.id, { scope: "both" });
  const back = await s.rollback(later.id, { scope: "both" });
  expect(back.replayed).toEqual([]);
  expect(readOrNull(file("log"))).toBe("L1\n");
});

it("applied again since, a set-aside call is the branch's again: a both move restoring that checkpoint as the newest keeps it", async () => {
  const { s } = await l2SetAside(false);
  const after = await s.checkpoint({ name: "after files rollback" });
  await s.rollback(after.id, { scope: "conversation" });
  expect(readOrNull(file("log"))).toBe("L1\nL2\n");
  const [m] = await s.append({ role: "user", content: "M" });
  // The edit restores `after`'s files (the newest on its lineage) and replays L2 over them: the branch had it.
  await s.edit(m!.id, { content: "M2" }, { scope: "both" });
  expect(readOrNull(file("log"))).toBe("L1\nL2\n");
  expect((await s.toolTrack()).map((t) => [t.args, t.applied])).toEqual([
    [{ path: file("log"), line: "L1" }, true],
    [{ path: file("log"), line: "L2" }, true],
  ]);
});

it("with no checkpoint after the files rollback, undo of a later rewind keeps the set-aside call out", async () => {
  const { s, start } = await l2SetAside(true);
  await s.rollback(start.id, { scope: "both" });
  expect(readOrNull(file("log"))).toBeNull();
  const back = await s.undo({ scope: "both" });
  expect(back.replayed).toEqual([]);
  expect(readOrNull(file("log"))).toBe("L1\n");
});

it("undo of a both rewind that left a re-applied call out brings it back: its branch had it (review 26)", async () => {
  const { s } = await l2SetAside(false);
  const after = await s.checkpoint({ name: "after files rollback" });
  await s.rollback(after.id, { scope: "conversation" });
  const x = (await s.info()).currentBranchId;
  await s.append({ role: "user", content: "on X" });
  expect(readOrNull(file("log"))).toBe("L1\nL2\n");
  const out = await s.rollback(after.id, { scope: "both" });
  expect(out.undone.map((t) => t.args)).toEqual([{ path: file("log"), line: "L2" }]);
  const back = await s.undo({ scope: "both" });
  expect((await s.info()).currentBranchId).toBe(x);
  expect(back.replayed.map((t) => t.args)).toEqual([{ path: file("log"), line: "L2" }]);
  expect(readOrNull(file("log"))).toBe("L1\nL2\n");
});

it("a both move to a point with no snapshot of its own after a files rollback restores one without the calls it took away", async () => {
  const { s, start } = await l2SetAside(true);
  // A checkpoint taken before the files rollback holds L2: the newest on the lineage, yet not what the files were after.
  expect(readOrNull(file("log"))).toBe("L1\n");
  await s.invoke("append_line", { path: file("log"), line: "L3" });
  expect(readOrNull(file("log"))).toBe("L1\nL3\n");
  await s.rollback(start.id, { scope: "both" });
  expect(readOrNull(file("log"))).toBeNull();
  const back = await s.undo({ scope: "both" });
  expect(readOrNull(file("log"))).toBe("L1\nL3\n");
  expect(back.replayed.map((t) => t.args)).toEqual([{ path: file("log"), line: "L3" }]);
  expect((await s.toolTrack()).filter((t) => t.applied).map((t) => t.args)).toEqual([
    { path: file("log"), line: "L1" },
    { path: file("log"), line: "L3" },
  ]);
});

it("redo of a both rewind that left a re-applied set-aside call out leaves it out again", async () => {
  const { s } = await l2SetAside(true);
  const after = await s.checkpoint({ name: "after files rollback" });
  await s.rollback(after.id, { scope: "conversation" });
  expect(readOrNull(file("log"))).toBe("L1\nL2\n");
  await s.rollback(after.id, { scope: "both" });
  expect(readOrNull(file("log"))).toBe("L1\n");
  // Back where a conversation move had applied L2 again: it comes back.
  await s.undo({ scope: "both" });
  expect(readOrNull(file("log"))).toBe("L1\nL2\n");
  // Forward to the rewind that left it out: out again.
  const redone = await s.redo({ scope: "both" });
  expect(redone.undone.map((t) => t.args)).toEqual([{ path: file("log"), line: "L2" }]);
  expect(redone.replayed).toEqual([]);
  expect(readOrNull(file("log"))).toBe("L1\n");
  expect((await s.toolTrack()).filter((t) => t.applied).map((t) => t.args)).toEqual([{ path: file("log"), line: "L1" }]);
});

it("a rewind to a checkpoint taken before a files rollback applies its call again there only: back on the branch it stays out", async () => {
  const { s, withL2 } = await l2SetAside(false);
  const a = (await s.info()).currentBranchId;
  // The new branch forks before the files rollback: its checkpoint's files hold L2, applied again there.
  await s.rollback(withL2.id, { scope: "both" });
  expect(readOrNull(file("log"))).toBe("L1\nL2\n");
  const back = await s.switchBranch(a, { scope: "both" });
  expect(readOrNull(file("log"))).toBe("L1\n");
  expect(back.replayed).toEqual([]);
  expect((await s.toolTrack()).filter((t) => t.applied).map((t) => t.args)).toEqual([{ path: file("log"), line: "L1" }]);
  // Undo and redo between the two branches keep each one's files.
  await s.undo({ scope: "both" });
  expect(readOrNull(file("log"))).toBe("L1\nL2\n");
  await s.redo({ scope: "both" });
  expect(readOrNull(file("log"))).toBe("L1\n");
});

it("the same when the rewind replays it in the conversation only", async () => {
  const { s, withL2 } = await l2SetAside(false);
  const a = (await s.info()).currentBranchId;
  await s.rollback(withL2.id, { scope: "conversation" });
  expect(readOrNull(file("log"))).toBe("L1\nL2\n");
  await s.switchBranch(a, { scope: "both" });
  expect(readOrNull(file("log"))).toBe("L1\n");
});

it("a rewind to a point before where the files rollback set a call aside applies it there only", async () => {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.invoke("append_line", { path: file("log"), line: "L1" });
  const withL1 = await s.checkpoint({ name: "L1" });
  await s.invoke("append_line", { path: file("log"), line: "L2" });
  const withL2 = await s.checkpoint({ name: "L2" });
  await s.append({ role: "user", content: "after L2" });
  await s.rollback(withL1.id, { scope: "files" });
  const a = (await s.info()).currentBranchId;
  await s.rollback(withL2.id, { scope: "both" });
  expect(readOrNull(file("log"))).toBe("L1\nL2\n");
  const back = await s.switchBranch(a, { scope: "both" });
  expect(back.replayed).toEqual([]);
  expect(readOrNull(file("log"))).toBe("L1\n");
  expect((await s.toolTrack()).filter((t) => t.applied).map((t) => t.args)).toEqual([{ path: file("log"), line: "L1" }]);
});

it("an edit of a message after the files rollback forks where it was set aside: the call stays out there", async () => {
  const { s } = await l2SetAside(false);
  const [m] = await s.append({ role: "user", content: "M" });
  await s.edit(m!.id, { content: "M2" }, { scope: "both" });
  expect(readOrNull(file("log"))).toBe("L1\n");
  expect((await s.toolTrack()).filter((t) => t.applied).map((t) => t.args)).toEqual([{ path: file("log"), line: "L1" }]);
});

it("set aside by an earlier version (no position kept): out on every lineage through its branch, as then", async () => {
  const { s, start } = await l2SetAside(true);
  await sqlOn(path.join(dir, "forkpoint.db"), `UPDATE set_aside SET position = NULL`);
  await s.rollback(start.id, { scope: "both" });
  expect(readOrNull(file("log"))).toBeNull();
  const back = await s.undo({ scope: "both" });
  expect(back.replayed).toEqual([]);
  expect(readOrNull(file("log"))).toBe("L1\n");
});

it("set aside on two branches by a files rollback on each: each keeps it out (review 27)", async () => {
  const { s, withL1, withL2 } = await l2SetAside(false);
  await s.append({ role: "user", content: "on A" });
  const a = (await s.info()).currentBranchId;
  // B forks before A's files rollback (L2 back there), then a files rollback of its own sets L2 aside on B too.
  await s.rollback(withL2.id, { scope: "both" });
  const b = (await s.info()).currentBranchId;
  await s.append({ role: "user", content: "on B" });
  await s.rollback(withL1.id, { scope: "files" });
  expect(readOrNull(file("log"))).toBe("L1\n");

  const toA = await s.switchBranch(a, { scope: "both" });
  expect(toA.replayed).toEqual([]);
  expect(readOrNull(file("log"))).toBe("L1\n");
  await s.switchBranch(b, { scope: "both" });
  expect(readOrNull(file("log"))).toBe("L1\n");
  // Applied again on B's lineage, it is B's again only: A still leaves it out.
  const onB = await s.checkpoint({ name: "on B" });
  const replayed = await s.rollback(onB.id, { scope: "conversation" });
  expect(replayed.replayed.map((t) => t.args)).toEqual([{ path: file("log"), line: "L2" }]);
  expect(readOrNull(file("log"))).toBe("L1\nL2\n");
  const back = await s.switchBranch(a, { scope: "both" });
  expect(back.undone.map((t) => t.args)).toEqual([{ path: file("log"), line: "L2" }]);
  expect(readOrNull(file("log"))).toBe("L1\n");
});

/**
 * Puts the set_aside table back as it was before a call could be set aside on several branches, upgrade not applied
 * (nor any later one: call_paths loses its outputs, hand_edited and hand_edit_ids, checkpoints their per-branch retention
 * index, branches their move_to_branch_id, continued_by and continued_at).
 */
async function asBeforePerBranch(db: string) {
  const journal = JSON.parse(fs.readFileSync(`drizzle/${onPostgres ? "postgres" : "sqlite"}/meta/_journal.json`, "utf8")) as {
    entries: { tag: string; when: number }[];
  };
  const since = journal.entries.find((e) => e.tag.endsWith("_set_aside_per_branch"))!.when;
  await sqlOn(db, `ALTER TABLE call_paths DROP COLUMN outputs`);
  await sqlOn(db, `ALTER TABLE call_paths DROP COLUMN hand_edited`);
  await sqlOn(db, `ALTER TABLE call_paths DROP COLUMN hand_edit_ids`);
  await sqlOn(db, `ALTER TABLE tool_results DROP COLUMN named_files`);
  await sqlOn(db, `ALTER TABLE branches DROP COLUMN move_to_branch_id`);
  await sqlOn(db, `ALTER TABLE branches DROP COLUMN continued_by`);
  await sqlOn(db, `ALTER TABLE branches DROP COLUMN continued_at`);
  await sqlOn(db, `ALTER TABLE branches DROP COLUMN continued_from`);
  await sqlOn(db, `DROP INDEX checkpoints_branch_kind_seq`);
  if (onPostgres)
    await sqlOn(
      db,
      `ALTER TABLE set_aside DROP CONSTRAINT set_aside_entry_id_branch_id_pk; ALTER TABLE set_aside ALTER COLUMN branch_id DROP NOT NULL;
      ALTER TABLE set_aside ALTER COLUMN branch_id DROP DEFAULT; ALTER TABLE set_aside ADD CONSTRAINT set_aside_pkey PRIMARY KEY (entry_id);
      DELETE FROM drizzle.__forkpoint_migrations WHERE created_at >= ${since}`,
    );
  else
    for (const statement of `CREATE TABLE old_set_aside (entry_id text PRIMARY KEY NOT NULL, session_id text NOT NULL,
      set_at integer NOT NULL, branch_id text, position integer);
      INSERT INTO old_set_aside SELECT entry_id, session_id, set_at, branch_id, position FROM set_aside; DROP TABLE set_aside;
      ALTER TABLE old_set_aside RENAME TO set_aside; CREATE INDEX set_aside_session ON set_aside (session_id);
      DELETE FROM __drizzle_migrations WHERE created_at >= ${since}`.split(";"))
      await sqlOn(db, statement);
}

it("set aside before a call could be set aside per branch: the row is kept by the upgrade", async () => {
  const { s, withL1, withL2 } = await l2SetAside(false);
  await s.append({ role: "user", content: "on A" });
  const a = (await s.info()).currentBranchId;
  await fp.close();
  const db = path.join(dir, "forkpoint.db");
  await asBeforePerBranch(db);
  fp = openForkpoint({ path: db, tools: [appendLineTool()] });
  const again = await fp.getSession(s.id, { userId: "u" });
  await again.rollback(withL2.id, { scope: "both" });
  await again.append({ role: "user", content: "on B" });
  await again.rollback(withL1.id, { scope: "files" });
  await again.switchBranch(a, { scope: "both" });
  expect(readOrNull(file("log"))).toBe("L1\n");
});

it("a row with no branch kept (an earlier version's) stays out of every lineage after the upgrade", async () => {
  const { s, start } = await l2SetAside(true);
  await fp.close();
  const db = path.join(dir, "forkpoint.db");
  await asBeforePerBranch(db);
  await sqlOn(db, `UPDATE set_aside SET branch_id = NULL`);
  fp = openForkpoint({ path: db, tools: [appendLineTool()] });
  await fp.ready;
  expect(await sqlOn(db, `SELECT branch_id FROM set_aside`)).toEqual([{ branch_id: "" }]);
  const again = await fp.getSession(s.id, { userId: "u" });
  await again.rollback(start.id, { scope: "both" });
  const back = await again.undo({ scope: "both" });
  expect(back.replayed).toEqual([]);
  expect(readOrNull(file("log"))).toBe("L1\n");
});
