// Crash loop (DESIGN §6.1, §6.2, §6.4 and the move journal): a child process does real operations on one session
// (append, turn, setState, checkpoint, invoke of a real file tool with undo, recordToolCall, rollback, edit, switch) and
// is SIGKILLed at seeded random moments, more than 50 times in all. After every kill the parent reopens the same
// file with the tools (recovery runs) and checks: every acknowledged operation is there, no operation is half
// there, every checkpoint restores with its checksum intact, no move is left running, and no tool effect was
// compensated twice (the tool's own log alternates run/undo for every invocation).
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { type Checkpoint, type Message, type RecoveryReport, type ToolInvocation } from "../../src/index.js";
import { readJsonLines, readLog, writeFileTool } from "../fixtures/file-tools.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { prng } from "../fixtures/prng.js";
import { expireLeases, onPooler, onPostgres, openForkpoint, sqlOn } from "../fixtures/backend.js";
import { nodeArgs } from "../fixtures/compiled.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WORKER = path.join(ROOT, "tests/fixtures/crash-loop-worker.ts");
const USER = "dora";
// On PostgreSQL fewer (each reopen also makes a database's connections): the crash semantics are the same. Through
// PgBouncer the engine and its SQL are PostgreSQL's (killed 20 times there): one lane's kills check what the pooler adds,
// a client gone in the middle of a transaction on a server connection it keeps.
const LANES = onPooler ? 1 : onPostgres ? 2 : 4; // independent databases, run side by side
// 32 kills in all (20 on PostgreSQL, 10 through PgBouncer); FORKPOINT_CRASH_KILLS sets the kills per lane for a longer run.
const KILLS_PER_LANE = Number(process.env.FORKPOINT_CRASH_KILLS ?? (onPostgres ? 10 : 8));
const SEED = Number(process.env.FORKPOINT_CRASH_SEED ?? 20_251_122);

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const dir of dirs) removeDir(dir);
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Lane {
  lane: number;
  dir: string;
  dbPath: string;
  ackFile: string;
  logFile: string;
  sessionId: string;
}

type Ack = { run: string; op: string; branchId: string } & Record<string, any>;

interface Stats {
  kills: number;
  /** Kills made in the child's loop, each after an operation of its run was acknowledged. */
  midLoop: number;
  acks: number;
  resumedMoves: number;
  unknownSteps: number;
  checkpointsRestored: number;
  /** Turns (messages + checkpoint) found in the database at the last check. */
  turns: number;
}

function readAcks(file: string): Ack[] {
  // Only complete lines count: a line is acknowledged once its newline is written. A line torn by a kill is not.
  return readJsonLines<Ack>(file).records;
}

/**
 * Runs one child against the lane's database and SIGKILLs it at a random moment: while it opens the database, or in
 * its loop once it acknowledged an operation of this run (then true), however slow a loaded machine makes it.
 */
async function runAndKill(lane: Lane, run: number, rand: () => number): Promise<boolean> {
  const seed = Math.floor(rand() * 2 ** 31);
  const proc = spawn(
    process.execPath,
    [...nodeArgs(WORKER), lane.dbPath, lane.dir, lane.ackFile, lane.logFile, String(seed), lane.sessionId, USER, `L${lane.lane}R${run}`],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  children.push(proc);
  let output = "";
  let ready = false;
  proc.stdout!.on("data", (d: Buffer) => {
    output += d.toString();
    if (output.includes("ready\n")) ready = true;
  });
  proc.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on("exit", (code, signal) => resolve({ code, signal })),
  );
  let gone = false;
  void exited.then(() => (gone = true));

  const acked = readAcks(lane.ackFile).length;
  const midLoop = rand() >= 0.12;
  if (!midLoop) {
    // Sometimes while it opens the database (migrations, recovery) rather than mid-loop.
    await sleep(150 + rand() * 500);
  } else {
    for (let i = 0; !ready && !gone && i < 6_000; i++) await sleep(5);
    if (!ready) throw new Error(`child ${run} of lane ${lane.lane} never became ready:\n${output}`);
    for (let i = 0; !gone && readAcks(lane.ackFile).length === acked && i < 6_000; i++) await sleep(5);
    await sleep(rand() * 350);
  }
  if (gone) throw new Error(`child ${run} of lane ${lane.lane} exited by itself:\n${output}`);
  proc.kill("SIGKILL");
  const { signal } = await exited;
  expect(signal, output).toBe("SIGKILL");
  await expireLeases(lane.dbPath, { endConnections: true });
  return midLoop;
}

/** Reopens the lane's database after a kill and checks every invariant; returns what it saw. */
async function verifyLane(lane: Lane, stats: Stats): Promise<void> {
  const fp = openForkpoint({ path: lane.dbPath, tools: [writeFileTool({ logFile: lane.logFile })] });
  const reports: RecoveryReport[] = [];
  fp.on("recovery", (r: RecoveryReport) => reports.push(r));
  try {
    await fp.ready;
    for (const r of reports) {
      expect(r.waiting).toEqual([]);
      expect(r.failed).toEqual([]);
      stats.resumedMoves += r.resumed.length;
      for (const m of r.resumed) stats.unknownSteps += m.unknown.length;
    }
    // Recovery finished everything: a second pass finds nothing, and the journal has nothing running or pending.
    const again = await fp.recover();
    expect({ ...again, unknown: [] }).toEqual({ resumed: [], waiting: [], failed: [], unknown: [], workspaces: [] });
    const q = <T>(sql: string, ...params: unknown[]) => sqlOn<T>(lane.dbPath, sql, params);
    const journal = {
      moves: await q<{ status: string; n: number }>(`SELECT status, count(*) AS n FROM moves GROUP BY status`),
      openSteps: (await q<{ n: number }>(`SELECT count(*) AS n FROM move_steps WHERE status IN ('pending', 'running')`))[0]!.n,
      uncertain: new Set(
        (await q<{ id: string }>(`SELECT DISTINCT entry_id AS id FROM move_steps WHERE status = 'unknown'`)).map((r) => r.id),
      ),
    };
    expect(journal.moves.filter((m) => m.status !== "done")).toEqual([]);
    // What it does list: calls a kill left running (never completed), and calls whose undo or replay a kill interrupted
    // (its step unknown, unresolved), reported unknown rather than forgotten: exactly those.
    const unfinished = again.unknown.filter((t) => t.status === "running");
    for (const t of unfinished) expect([t.completedAt, t.applied]).toEqual([null, false]);
    expect(new Set(again.unknown.filter((t) => t.status !== "running").map((t) => t.id))).toEqual(journal.uncertain);
    expect(journal.openSteps).toBe(0);

    const s = await fp.getSession(lane.sessionId, { userId: USER });
    const branches = new Map((await s.branches()).map((b) => [b.id, b]));
    expect(branches.has((await s.info()).currentBranchId)).toBe(true);
    const histories = new Map<string, Message[]>();
    const history = async (branchId: string) => {
      let h = histories.get(branchId);
      if (!h) histories.set(branchId, (h = await s.history({ branchId })));
      return h;
    };
    const tracks = new Map<string, ToolInvocation[]>();
    const track = async (branchId: string) => {
      let t = tracks.get(branchId);
      if (!t) tracks.set(branchId, (t = await s.toolTrack({ branchId })));
      return t;
    };

    /** An acknowledged batch of messages (append or turn): on its branch, in order, with the contents written. */
    const ackedBatch = async (a: Ack, where: string, extra: object) => {
      expect(branches.has(a.branchId), where).toBe(true);
      const h = await history(a.branchId);
      const at = h.findIndex((m) => m.id === a.ids[0]);
      expect(at, where).toBeGreaterThanOrEqual(0);
      const got = h.slice(at, at + a.k);
      expect(
        got.map((m) => m.id),
        where,
      ).toEqual(a.ids);
      expect(
        got.map((m) => m.content),
        where,
      ).toEqual(a.ids.map((_: string, i: number) => ({ batch: a.batch, i, k: a.k, ...extra })));
      return got;
    };

    // 1. Every acknowledged operation is there.
    const acks = readAcks(lane.ackFile);
    stats.acks = acks.length;
    for (const a of acks) {
      const where = `${a.op} ${a.run}: ${JSON.stringify(a).slice(0, 300)}`;
      switch (a.op) {
        case "append": {
          const got = await ackedBatch(a, where, {});
          expect(
            got.map((m) => m.position),
            where,
          ).toEqual(a.positions);
          break;
        }
        case "turn": {
          const got = await ackedBatch(a, where, { turn: true });
          expect(got.at(-1)!.position, where).toBe(a.position);
          const restored = await s.restore(a.checkpointId);
          expect(restored.checkpoint.position, where).toBe(a.position);
          expect(restored.history.at(-1)?.id, where).toBe(a.ids.at(-1));
          break;
        }
        case "setState": {
          const bodies = (
            await q<{ body: string }>(
              `SELECT s.body FROM entries e JOIN state_snapshots s ON s.id = e.state_id WHERE e.branch_id = $1 AND e.kind = 'state'`,
              a.branchId,
            )
          ).map((r) => JSON.parse(r.body) as unknown);
          expect(bodies, where).toContainEqual(a.value);
          break;
        }
        case "checkpoint": {
          expect(a.branchId, where).toBe(a.expectedBranchId);
          const restored = await s.restore(a.id);
          expect(restored.checkpoint.branchId, where).toBe(a.branchId);
          expect(restored.checkpoint.position, where).toBe(a.position);
          expect(restored.state, where).toEqual(a.state);
          expect(restored.history.length, where).toBe(a.historyLength);
          expect(restored.history.at(-1)?.id ?? null, where).toBe(a.lastMessageId);
          expect(restored.toolTrack.length, where).toBe(a.tools);
          break;
        }
        case "invoke": {
          const t = await track(a.branchId);
          const found = t.filter((x) => x.tool === "write_file" && (x.args as { text: string }).text === a.text);
          expect(found, where).toHaveLength(1);
          expect(found[0]!.status, where).toBe("succeeded");
          expect(found[0]!.result, where).toEqual(a.result);
          break;
        }
        case "record": {
          const found = (await track(a.branchId)).filter((x) => x.id === a.id);
          expect(found, where).toHaveLength(1);
          expect(found[0]!.status, where).toBe("succeeded");
          break;
        }
        case "rollback": {
          const b = branches.get(a.branchId);
          expect(b, where).toBeDefined();
          if (a.stayed) break; // to where the session already was: the branch it was on
          expect(b!.forkCheckpointId, where).toBe(a.checkpointId);
          expect(b!.reason, where).toBe("rollback");
          break;
        }
        case "edit": {
          expect(branches.get(a.branchId)?.reason, where).toBe("edit");
          const h = await history(a.branchId);
          const m = h.find((x) => x.id === a.messageId);
          expect(m?.content, where).toEqual({ batch: a.batch, i: 0, k: 1, edits: a.of });
          break;
        }
        case "switch":
          expect(branches.has(a.branchId), where).toBe(true);
          break;
        default:
          throw new Error(`unknown acknowledgement ${where}`);
      }
    }

    // 2. No operation is half there: every append batch is complete, every branch's own positions are gapless.
    const messages = await q<{ content: string; position: number }>(`SELECT content, position FROM entries WHERE kind = 'message'`);
    const shape = {
      contents: messages.map((r) => JSON.parse(r.content) as { batch: string; i: number; k: number }),
      spans: await q<{ id: string; fork: number; lo: number; hi: number; n: number }>(
        `SELECT b.id, b.fork_position AS fork, min(e.position) AS lo, max(e.position) AS hi, count(e.id) AS n
        FROM branches b JOIN entries e ON e.branch_id = b.id GROUP BY b.id, b.fork_position`,
      ),
    };
    const batches = new Map<string, number[]>();
    for (const c of shape.contents) batches.set(c.batch, [...(batches.get(c.batch) ?? []), c.i]);
    for (const c of shape.contents) {
      expect(
        batches.get(c.batch)!.sort((x, y) => x - y),
        `batch ${c.batch}`,
      ).toEqual(Array.from({ length: c.k }, (_, i) => i));
    }
    for (const span of shape.spans) {
      expect(span.lo, `branch ${span.id}`).toBe(span.fork + 1);
      expect(span.hi - span.lo + 1, `branch ${span.id}`).toBe(span.n);
    }

    // A turn's messages and its checkpoint landed together or not at all (acknowledged or not).
    // Each turn checkpoint sits right after the last message of its batch.
    const lastMessages = new Map<string, number>();
    for (const m of messages) {
      const content = JSON.parse(m.content) as { batch: string; turn?: boolean };
      if (content.turn === true) lastMessages.set(content.batch, Math.max(lastMessages.get(content.batch) ?? 0, m.position));
    }
    const turns = {
      checkpoints: new Map(
        (await q<{ name: string; position: number; metadata: string | null }>(`SELECT name, position, metadata FROM checkpoints`))
          .filter((r) => r.metadata !== null && (JSON.parse(r.metadata) as { turn?: unknown }).turn != null)
          .map((r) => [r.name, r.position]),
      ),
      lastMessages,
    };
    const turnBatches = new Set(shape.contents.filter((c) => (c as { turn?: boolean }).turn).map((c) => c.batch));
    expect([...turnBatches].sort()).toEqual([...turns.checkpoints.keys()].sort());
    expect(new Map([...turns.checkpoints].sort())).toEqual(new Map([...turns.lastMessages].sort()));
    stats.turns = turnBatches.size;

    // 3. Every checkpoint (acknowledged or not) restores with its checksum intact.
    const all: Checkpoint[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: Checkpoint[]; nextCursor: string | null } = await s.listCheckpoints({ limit: 1000, cursor });
      all.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    for (const cp of all) {
      const restored = await s.restore(cp.id);
      expect(restored.checkpoint).toEqual(cp);
    }
    expect(all.length).toBeGreaterThanOrEqual(acks.filter((a) => a.op === "checkpoint").length);
    stats.checkpointsRestored += all.length;

    // 4. No effect compensated twice, none replayed twice: per invocation, the tool's log alternates run / undo
    //    (a recorded call starts applied: the framework ran it), and the applied set agrees with the log's last word,
    //    except for invocations whose step was interrupted (reported unknown) or whose run was (still "running").
    const tools = await q<{ id: string; callId: string | null; status: string | null; applied: number }>(
      `SELECT e.id, e.call_id AS "callId", r.status, CASE WHEN a.entry_id IS NULL THEN 0 ELSE 1 END AS applied
        FROM entries e LEFT JOIN tool_results r ON r.entry_id = e.id LEFT JOIN applied a ON a.entry_id = e.id WHERE e.kind = 'tool'`,
    );
    const byId = new Map(tools.map((t) => [t.id, t]));
    const ops = new Map<string, string[]>();
    for (const c of readLog(lane.logFile)) ops.set(c.invocationId, [...(ops.get(c.invocationId) ?? []), c.op]);
    for (const [id, list] of ops) expect(byId.has(id), `logged invocation ${id} is recorded`).toBe(true);
    for (const t of tools) {
      const recorded = t.callId?.startsWith("rec-") ?? false;
      const seq = [...(recorded ? ["run"] : []), ...(ops.get(t.id) ?? [])];
      seq.forEach((op, i) => expect(op, `invocation ${t.id} (${t.status}) ops ${seq.join(",")}`).toBe(i % 2 === 0 ? "run" : "undo"));
      if (journal.uncertain.has(t.id)) continue;
      if (t.status === null) {
        // killed while the tool ran: never applied, never touched again
        expect(t.applied, `running invocation ${t.id}`).toBe(0);
        expect(seq.length, `running invocation ${t.id}`).toBeLessThanOrEqual(1);
      } else {
        expect(t.status).toBe("succeeded");
        expect(Boolean(t.applied), `invocation ${t.id} applied vs log ${seq.join(",")}`).toBe(seq.at(-1) === "run");
      }
    }
  } finally {
    await fp.close();
  }
}

async function runLane(laneNo: number): Promise<Stats> {
  const dir = makeTempDir(`forkpoint-crashloop-${laneNo}-`);
  dirs.push(dir);
  const dbPath = path.join(dir, "forkpoint.db");
  const logFile = path.join(dir, "tool-calls.jsonl");
  const setup = openForkpoint({ path: dbPath, tools: [writeFileTool({ logFile })] });
  const session = await setup.createSession({ userId: USER, title: `crash lane ${laneNo}` });
  await setup.close();
  const lane: Lane = { lane: laneNo, dir, dbPath, ackFile: path.join(dir, "acks.jsonl"), logFile, sessionId: session.id };
  const rand = prng(SEED + laneNo * 7_919);
  const stats: Stats = { kills: 0, midLoop: 0, acks: 0, resumedMoves: 0, unknownSteps: 0, checkpointsRestored: 0, turns: 0 };
  for (let run = 0; run < KILLS_PER_LANE; run++) {
    if (await runAndKill(lane, run, rand)) stats.midLoop += 1;
    stats.kills += 1;
    await verifyLane(lane, stats);
  }
  return stats;
}

describe("a child doing real operations, SIGKILLed again and again", () => {
  it(`keeps every acknowledged operation, nothing half done, every checkpoint intact, no move repeated (${LANES} x ${KILLS_PER_LANE} kills)`, async () => {
    const results = await Promise.all(Array.from({ length: LANES }, (_, i) => runLane(i)));
    const total = results.reduce(
      (sum, r) => ({
        kills: sum.kills + r.kills,
        midLoop: sum.midLoop + r.midLoop,
        acks: sum.acks + r.acks,
        resumedMoves: sum.resumedMoves + r.resumedMoves,
        unknownSteps: sum.unknownSteps + r.unknownSteps,
        checkpointsRestored: sum.checkpointsRestored + r.checkpointsRestored,
        turns: sum.turns + r.turns,
      }),
      { kills: 0, midLoop: 0, acks: 0, resumedMoves: 0, unknownSteps: 0, checkpointsRestored: 0, turns: 0 },
    );
    console.log(`crash loop (seed ${SEED}): ${JSON.stringify(total)}`);
    expect(total.kills).toBeGreaterThanOrEqual(LANES * KILLS_PER_LANE);
    // the children did real work between kills (not just start-up): each kill in the loop came after an acknowledgement
    expect(total.midLoop).toBeGreaterThan(0);
    expect(total.acks).toBeGreaterThanOrEqual(total.midLoop);
    expect(total.turns).toBeGreaterThan(0);
  }, 240_000);
});
