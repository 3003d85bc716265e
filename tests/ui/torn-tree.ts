// A session's tree read through the UI server while another process moves the session between two branches.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { expect } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { nodeArgs } from "../fixtures/compiled.js";
import { repo } from "./page.js";

/** Two branches of a new session of `user`, each with a tool call of its own on its lineage; `b` is current. */
export async function twoBranches(fp: Forkpoint, user: string) {
  const s = await fp.createSession({ userId: user, title: "Moved by another server" });
  await s.append({ role: "user", content: "hello" });
  const cp = await s.checkpoint({ name: "fork" });
  await s.recordToolCall({ tool: "on_a", args: {}, result: "a" });
  const a = (await s.info()).currentBranchId;
  await s.rollback(cp.id);
  await s.recordToolCall({ tool: "on_b", args: {}, result: "b" });
  return { session: s.id, a, b: (await s.info()).currentBranchId };
}

interface Tree {
  info: { currentBranchId: string };
  branches: { id: string; current: boolean }[];
  toolTrack: { tool: string }[];
  checkpoints: { branchId: string }[];
}

/**
 * Reads `/api/session` `reads` times through `get` while a child process (another app server on `target`) switches the
 * session between its branches `a` and `b`: every answer must be one state of the session (the branch `info` names
 * is the one branch marked current, the tool track is that branch's), and the session must have been seen on both.
 */
export async function expectOneStateWhileMoving(
  target: string,
  ids: { user: string; session: string; a: string; b: string },
  get: (path: string) => Promise<Tree>,
  reads = 400,
): Promise<void> {
  const mover = spawn(
    process.execPath,
    [...nodeArgs(join(repo, "tests/fixtures/ui-mover.ts")), target, ids.user, ids.session, ids.a, ids.b],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  try {
    await new Promise<void>((resolve, reject) => {
      mover.stdout.on("data", (chunk: Buffer) => chunk.toString().includes("moving") && resolve());
      mover.on("exit", (code) => reject(new Error(`the mover exited with ${code}`)));
    });
    const torn: string[] = [];
    const seen = new Set<string>();
    // Past `reads`, on until both branches were seen: a loaded machine may give the mover no turn for a while.
    for (let i = 0; i < reads || (seen.size < 2 && i < reads * 50); i++) {
      const tree = await get(`/api/session?user=${ids.user}&session=${ids.session}`);
      const current = tree.info.currentBranchId;
      seen.add(current);
      const marked = tree.branches.filter((b) => b.current).map((b) => b.id);
      const tools = tree.toolTrack.map((t) => t.tool);
      const expected = current === ids.a ? ["on_a"] : ["on_b"];
      const listed = new Set(tree.branches.map((b) => b.id));
      if (marked.join() !== current || tools.join() !== expected.join() || !tree.checkpoints.every((c) => listed.has(c.branchId)))
        torn.push(`read ${i}: info ${current}, marked ${marked.join()}, tools ${tools.join()}`);
    }
    expect(torn).toEqual([]);
    expect([...seen].sort()).toEqual([ids.a, ids.b].sort());
  } finally {
    mover.kill("SIGTERM");
  }
}
