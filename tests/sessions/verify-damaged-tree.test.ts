// A damaged branch tree (an ancestry cycle, a foreign current branch, a tampered message count): reads fail typed, verify names it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { IntegrityError, type Forkpoint } from "../../src/index.js";
import { openForkpoint, sqlOn } from "../fixtures/backend.js";

let dir: string;
let file: string;
let fp: Forkpoint;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "forkpoint-damaged-tree-"));
  file = join(dir, "db.sqlite");
});
afterEach(async () => {
  await fp?.close();
  rmSync(dir, { recursive: true, force: true });
});

const tamper = (sql: string, ...params: unknown[]) => sqlOn(file, sql, params);

/** A session on a rollback branch (forked from its root at a checkpoint), and its two branch ids. */
async function build() {
  fp = openForkpoint({ path: file });
  const a = await fp.createSession({ userId: "ann" });
  await a.append([
    { role: "user", content: "one" },
    { role: "assistant", content: "two" },
  ]);
  const cp = await a.checkpoint({ name: "cp" });
  await a.append({ role: "user", content: "three" });
  await a.rollback(cp.id);
  const rows = await sqlOn<{ id: string; parent_id: string | null }>(file, `SELECT id, parent_id FROM branches WHERE session_id = $1`, [
    a.id,
  ]);
  const root = rows.find((r) => r.parent_id === null)!.id;
  const fork = rows.find((r) => r.parent_id !== null)!.id;
  return { a, cp, root, fork };
}

describe("a damaged branch tree", () => {
  it("a cycle in the branches' parents makes history and restore reject with IntegrityError, and verify name it", async () => {
    const { a, cp, root, fork } = await build();
    await tamper(`UPDATE branches SET parent_id = $1 WHERE id = $2`, fork, root);
    await expect(a.history()).rejects.toBeInstanceOf(IntegrityError);
    await expect(a.history({ branchId: root })).rejects.toMatchObject({ code: "INTEGRITY_ERROR" });
    await expect(a.restore(cp.id)).rejects.toBeInstanceOf(IntegrityError);
    await fp.listSessions({ userId: "ann" });
    const report = await fp.verify();
    expect(report.ok).toBe(false);
    const cycle = report.problems.filter((p) => p.kind === "branch" && /cycle/.test(p.detail));
    expect(cycle).toHaveLength(1);
    expect([root, fork]).toContain(cycle[0]!.id);
    expect(cycle[0]!.detail).toContain(root);
    expect(cycle[0]!.detail).toContain(fork);
  });

  it("verify reports a current branch that belongs to another session", async () => {
    const { a } = await build();
    const b = await fp.createSession({ userId: "bob" });
    await b.append({ role: "user", content: "hello" });
    const [bBranch] = await sqlOn<{ id: string }>(file, `SELECT id FROM branches WHERE session_id = $1`, [b.id]);
    await tamper(`UPDATE sessions SET current_branch_id = $1 WHERE id = $2`, bBranch!.id, a.id);
    const report = await fp.verify({ sessionId: a.id });
    expect(report.ok).toBe(false);
    expect(report.problems).toContainEqual(
      expect.objectContaining({ kind: "branch", id: bBranch!.id, detail: expect.stringContaining(a.id) }),
    );
  });

  it("verify reports an entry whose message count was tampered", async () => {
    fp = openForkpoint({ path: file });
    const a = await fp.createSession({ userId: "ann" });
    const [, m2] = await a.append([
      { role: "user", content: "one" },
      { role: "assistant", content: "two" },
    ]);
    await tamper(`UPDATE entries SET msg_count = 99 WHERE id = $1`, m2!.id);
    const report = await fp.verify();
    expect(report.ok).toBe(false);
    expect(report.problems).toContainEqual(expect.objectContaining({ kind: "entry", id: m2!.id }));
  });
});
