// Several app servers on one PostgreSQL database: a server killed in the middle of a rollback leaves its move to
// another server, which waits while the move's lease holds and then finishes it exactly once.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openForkpoint, type Forkpoint, type RecoveryReport, type ToolInvocation } from "../../src/index.js";
import { writeFileTool } from "../fixtures/file-tools.js";
import { freshPgDatabase, pgServer } from "../fixtures/postgres-database.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { nodeArgs } from "../fixtures/compiled.js";

const url = await pgServer();
const repoRoot = path.resolve(import.meta.dirname, "../..");
const N = 20;
const LEASE_MS = 1_500;
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

const undoLines = (log: string): { invocationId: string; pid: number }[] =>
  fs.existsSync(log)
    ? fs
        .readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { op: string; invocationId: string; pid: number })
        .filter((c) => c.op === "undo")
    : [];
const ids = (list: ToolInvocation[]) => list.map((t) => t.id);

function open(db: string, log: string, recover = true): Forkpoint {
  const fp = openForkpoint({ postgres: db, leaseMs: LEASE_MS, recover, tools: [writeFileTool({ logFile: log })] });
  cleanup.push(() => fp.close());
  return fp;
}

/** A session with `calls` write_file calls after a checkpoint, and a child server rolling it back to the checkpoint: its
 * undo numbered `holdAt` never returns. */
async function rollingBackServer(prefix: string, calls: number, holdAt: number) {
  const dir = makeTempDir(prefix);
  cleanup.push(() => removeDir(dir));
  const db = await freshPgDatabase();
  const log = path.join(dir, "calls.log");
  const setup = open(db, path.join(dir, "setup.log"));
  const s = await setup.createSession({ userId: "u" });
  const cp = await s.checkpoint({ name: "before" });
  for (let i = 0; i < calls; i++) await s.invoke("write_file", { path: path.join(dir, `f${i}.txt`), text: `v${i}` });
  const track = await s.toolTrack();
  const child: ChildProcess = spawn(
    process.execPath,
    [...nodeArgs(path.join(repoRoot, "tests/fixtures/pg-crash-rollback.ts")), db, s.id, "u", cp.id, log, String(LEASE_MS), String(holdAt)],
    { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] },
  );
  return { dir, db, log, s, cp, track, child };
}

describe.skipIf(!url)("an app server killed in the middle of a rollback (PostgreSQL)", () => {
  it("is waited for while its lease holds, then finished once by another server", async () => {
    const { dir, db, log, s, cp, track, child } = await rollingBackServer("forkpoint-pg-crash-", N, 3);
    let output = "";
    child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
    cleanup.push(() => void child.kill("SIGKILL"));
    for (let i = 0; undoLines(log).length < 3; i++) {
      if (i > 12_000) throw new Error(`the child never undid 3 calls:\n${output}`);
      await new Promise((r) => setTimeout(r, 5));
    }

    // The moving server is alive and renews its lease: another server leaves its move alone, and refuses a move of its own.
    // Its recoveries are the explicit calls below (one at open would look again by itself once the lease runs out).
    const peer = open(db, log, false);
    const whileAlive = await peer.recover();
    expect(whileAlive.resumed).toEqual([]);
    expect(whileAlive.waiting).toHaveLength(1);
    const viaPeer = await peer.getSession(s.id, { userId: "u" });
    await expect(viaPeer.rollback(cp.id)).rejects.toMatchObject({ code: "MOVE_IN_PROGRESS" });

    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");
    const byChild = undoLines(log).length;

    // Once the lease runs out (nobody renews it), the peer takes the move over and finishes it.
    let report = await peer.recover();
    for (let i = 0; report.resumed.length === 0; i++) {
      expect(report.failed).toEqual([]);
      if (i > 600) throw new Error("the move was never taken over");
      await new Promise((r) => setTimeout(r, 50));
      report = await peer.recover();
    }
    expect(report.resumed).toHaveLength(1);
    const result = report.resumed[0]!;
    // Every call is undone exactly once, but the one whose undo was running at the kill: reported unknown, never repeated.
    expect([...ids(result.undone), ...ids(result.unknown)].sort()).toEqual(ids(track).sort());
    expect(result.unknown.length).toBeLessThanOrEqual(1);
    const undone = undoLines(log).map((c) => c.invocationId);
    expect(new Set(undone).size).toBe(undone.length);
    const unknownIds = ids(result.unknown);
    expect(undone.filter((id) => !unknownIds.includes(id)).sort()).toEqual(ids(result.undone).sort());
    expect(byChild).toBeGreaterThanOrEqual(3);
    for (let i = 0; i < N; i++) {
      const unknown = result.unknown.some((t) => (t.args as { path: string }).path.endsWith(`f${i}.txt`));
      if (!unknown) expect(fs.existsSync(path.join(dir, `f${i}.txt`))).toBe(false);
    }
    expect((await viaPeer.info()).currentBranchId).toBe(result.branch.id);
    expect(await peer.recover()).toMatchObject({ resumed: [], waiting: [] });
    expect((await peer.verify()).ok).toBe(true);
  });

  it("restarted before its lease ran out, finishes the move itself once the lease has, without a call to recover()", async () => {
    const { dir, db, log, s, cp, track, child } = await rollingBackServer("forkpoint-pg-restart-", 8, 2);
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
    cleanup.push(() => void child.kill("SIGKILL"));
    for (let i = 0; undoLines(log).length < 2; i++) {
      if (i > 12_000) throw new Error("the child never undid 2 calls");
      await new Promise((r) => setTimeout(r, 5));
    }
    child.kill("SIGKILL");
    await exited;

    // The server comes back at once, as a supervisor restarts it: the crashed move's lease still holds at open.
    const restarted = open(db, log);
    const recovered = new Promise<RecoveryReport>((resolve) => restarted.on("recovery", resolve));
    const report = await Promise.race([
      recovered,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("the move was never finished")), 20 * LEASE_MS)),
    ]);
    expect(report.resumed).toHaveLength(1);
    const result = report.resumed[0]!;
    expect([...ids(result.undone), ...ids(result.unknown)].sort()).toEqual(ids(track).sort());
    const undone = undoLines(log).map((c) => c.invocationId);
    expect(new Set(undone).size).toBe(undone.length);
    const again = await restarted.getSession(s.id, { userId: "u" });
    expect((await again.info()).currentBranchId).toBe(result.branch.id);
    expect(await restarted.recover()).toMatchObject({ resumed: [], waiting: [] });
  });

  // Review 18 (issue 32's item 9): a server open all along is not stuck on MOVE_IN_PROGRESS until someone recovers.
  it("is finished by another server open all along, on its next call once the lease ran out, without recover()", async () => {
    const { dir, db, log, s, cp, track, child } = await rollingBackServer("forkpoint-pg-peer-", 8, 2);
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
    cleanup.push(() => void child.kill("SIGKILL"));
    const peer = open(db, log, false);
    const viaPeer = await peer.getSession(s.id, { userId: "u" });
    for (let i = 0; undoLines(log).length < 2; i++) {
      if (i > 12_000) throw new Error("the child never undid 2 calls");
      await new Promise((r) => setTimeout(r, 5));
    }
    child.kill("SIGKILL");
    await exited;

    const after = path.join(dir, "after.txt");
    let refused = 0;
    for (;;) {
      const outcome = await viaPeer.invoke("write_file", { path: after, text: "after" }).then(
        () => "ran",
        (e: { code?: string }) => e.code,
      );
      if (outcome === "ran") break;
      expect(outcome).toBe("MOVE_IN_PROGRESS");
      if (++refused > 600) throw new Error("the call was refused on and on");
      await new Promise((r) => setTimeout(r, 50));
    }
    // The move was finished first (each call undone once, or reported unknown), then the call ran on its branch.
    expect(fs.readFileSync(after, "utf8")).toBe("after");
    const undone = undoLines(log).map((c) => c.invocationId);
    expect(new Set(undone).size).toBe(undone.length);
    const now = await viaPeer.toolTrack();
    expect(now.map((t) => (t.args as { path: string }).path)).toEqual([after]);
    expect(ids(track).every((id) => undone.includes(id) || !now.some((t) => t.id === id))).toBe(true);
    expect((await viaPeer.info()).currentBranchId).not.toBe(cp.branchId);
    expect(await peer.recover()).toMatchObject({ resumed: [], waiting: [] });
    expect((await peer.verify()).ok).toBe(true);
  });
});
