// fp.verify: recomputes every chain, completion, snapshot and checksum, and reports each problem instead of throwing.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NotFoundError, ValidationError, defineTool, type Forkpoint } from "../../src/index.js";
import { openForkpoint, sqlOn } from "../fixtures/backend.js";

let dir: string;
let file: string;
let fp: Forkpoint;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "forkpoint-verify-"));
  file = join(dir, "db.sqlite");
});
afterEach(async () => {
  await fp?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Two sessions; the first with a rollback branch, state, a tool call and checkpoints. */
async function build() {
  fp = openForkpoint({ path: file, tools: [defineTool({ name: "t", run: async () => ({ ok: true }), undo: async () => {} })] });
  const a = await fp.createSession({ userId: "ann" });
  const [m1] = await a.append([
    { role: "user", content: "one" },
    { role: "assistant", content: "two" },
  ]);
  await a.setState({ step: 1 });
  const cp = await a.checkpoint({ name: "cp" });
  await a.invoke("t", { x: 1 });
  await a.rollback(cp.id);
  const [m3] = await a.append({ role: "user", content: "three" });
  const b = await fp.createSession({ userId: "bob" });
  await b.append({ role: "user", content: "hello" });
  return { a, b, m1: m1!, m3: m3!, cp };
}

const tamper = (sql: string, ...params: unknown[]) => sqlOn(file, sql, params);

describe("fp.verify", () => {
  it("finds nothing wrong in an intact database, for one session or all", async () => {
    const { a } = await build();
    expect(await fp.verify()).toEqual({ ok: true, sessions: 2, problems: [] });
    expect(await fp.verify({ sessionId: a.id })).toEqual({ ok: true, sessions: 1, problems: [] });
  });

  it("reports each damaged row with its kind and id, and keeps going", async () => {
    const { a, b, m1, m3, cp } = await build();
    await tamper(`UPDATE entries SET content = '"ONE"' WHERE id = $1`, m1.id);
    await tamper(`UPDATE entries SET role = 'system' WHERE id = $1`, m3.id);
    await tamper(`UPDATE tool_results SET result = '{"ok":false}'`);
    await tamper(`UPDATE checkpoints SET name = 'renamed' WHERE id = $1`, cp.id);
    await tamper(`UPDATE state_snapshots SET body = '{"step":2}'`);
    const report = await fp.verify();
    expect(report.ok).toBe(false);
    const found = report.problems.map((p) => [p.kind, p.id]);
    expect(found).toEqual(
      expect.arrayContaining([
        ["entry", m1.id],
        ["entry", m3.id],
        ["checkpoint", cp.id],
      ]),
    );
    expect(found.some(([kind]) => kind === "tool-result")).toBe(true);
    expect(found.some(([kind]) => kind === "state")).toBe(true);
    // The other session is intact.
    expect(await fp.verify({ sessionId: b.id })).toEqual({ ok: true, sessions: 1, problems: [] });
    expect((await fp.verify({ sessionId: a.id })).problems.length).toBe(report.problems.length);
  });

  it("reports a checkpoint moved to another user as an orphan, in a whole-database verify", async () => {
    const { cp } = await build();
    await tamper(`UPDATE checkpoints SET user_id = 'mallory' WHERE id = $1`, cp.id);
    const report = await fp.verify();
    expect(report.ok).toBe(false);
    expect(report.problems).toContainEqual({ kind: "checkpoint", id: cp.id, detail: "checkpoint belongs to no session of its user" });
    const one = await fp.verify({ sessionId: cp.sessionId });
    expect(one.problems).toContainEqual({ kind: "checkpoint", id: cp.id, detail: "checkpoint belongs to no session of its user" });
  });

  it("reports a checkpoint whose metadata index disagrees with its metadata: a changed, missing or extra row", async () => {
    const { a } = await build();
    const long = "x".repeat(300);
    const tagged = await a.checkpoint({ name: "tagged", metadata: { agent: "planner", step: 2, nested: { a: 1 }, long } });
    const other = await a.checkpoint({ name: "other", metadata: { agent: "critic", done: true } });
    const third = await a.checkpoint({ name: "third", metadata: { agent: "critic" } });
    await a.expire(third.id); // expired, not yet pruned: its rows are still checked
    // Intact, with values the index leaves out (objects, long text): nothing is wrong.
    expect(await fp.verify()).toMatchObject({ ok: true, problems: [] });
    const seqOf = `(SELECT seq FROM checkpoints WHERE id = $1)`;
    await tamper(`UPDATE checkpoint_metadata SET value = '"writer"' WHERE key = 'agent' AND cp_seq = ${seqOf}`, tagged.id);
    await tamper(`DELETE FROM checkpoint_metadata WHERE key = 'done' AND cp_seq = ${seqOf}`, other.id);
    await tamper(`INSERT INTO checkpoint_metadata (cp_user, key, value, cp_seq) SELECT 'ann', 'agent', '"writer"', ${seqOf}`, third.id);
    // What a metadata filter now reads: a checkpoint that was never the writer's, and none of those that are done.
    const filtered = async (metadata: Record<string, string | boolean>) =>
      (await fp.listCheckpoints({ userId: "ann", metadata })).items.map((c) => c.name);
    expect(await filtered({ agent: "writer" })).toEqual(["tagged"]);
    expect(await filtered({ done: true })).toEqual([]);
    for (const report of [await fp.verify(), await fp.verify({ sessionId: a.id })]) {
      expect(report.ok).toBe(false);
      const index = report.problems.filter((p) => p.detail.includes("metadata index"));
      expect(index.map((p) => [p.kind, p.id])).toEqual([
        ["checkpoint", tagged.id],
        ["checkpoint", other.id],
        ["checkpoint", third.id],
      ]);
      expect(index[0]!.detail).toMatch(/lacks "agent".*rows its metadata does not make for "agent"/);
      expect(index[1]!.detail).toMatch(/lacks "done"/);
      expect(index[2]!.detail).toMatch(/rows its metadata does not make for "agent"/);
    }
    // Nothing else is reported: the checkpoints and their checksums are intact.
    expect((await fp.verify()).problems).toHaveLength(3);
  });

  it("reports a branch whose fork checkpoint is missing", async () => {
    const { a, cp } = await build();
    const branch = (await a.branches()).find((b) => b.forkCheckpointId === cp.id)!;
    await tamper(`DELETE FROM checkpoints WHERE id = $1`, cp.id);
    const report = await fp.verify({ sessionId: a.id });
    expect(report.problems).toContainEqual({ kind: "branch", id: branch.id, detail: `the checkpoint it forks from (${cp.id}) is missing` });
  });

  it("reports a gap in a branch's log", async () => {
    const { m1 } = await build();
    await tamper(
      `DELETE FROM entries WHERE id = (SELECT id FROM entries WHERE position = 2 AND branch_id = (SELECT branch_id FROM entries WHERE id = $1))`,
      m1.id,
    );
    const report = await fp.verify();
    expect(report.problems.some((p) => p.kind === "branch" && p.detail.includes("gap"))).toBe(true);
  });

  it("refuses an unknown session id and bad input", async () => {
    await build();
    await expect(fp.verify({ sessionId: "ses_nope" })).rejects.toBeInstanceOf(NotFoundError);
    await expect(fp.verify({ sessionId: "" })).rejects.toBeInstanceOf(ValidationError);
    await expect(fp.verify({ nope: 1 } as never)).rejects.toBeInstanceOf(ValidationError);
  });
});
