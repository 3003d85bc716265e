// A session with a workspace and no tool calls, moved by two processes: while one's move restores the files, the
// other's moves (any scope) are refused with MOVE_IN_PROGRESS, so the first lands where it was meant, its undo history
// intact, and nothing is left journaled for every later move of the session to be refused over.
import type { ChildProcess } from "node:child_process";
import Database from "better-sqlite3";
import fs from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import type { Checkpoint, Forkpoint, SessionHandle } from "../../src/index.js";
import { onPostgres, openForkpoint, sqlOn } from "../fixtures/backend.js";
import { roller, type Roller } from "../fixtures/roller.js";
import { makeTempDir, removeDir } from "../helpers.js";

/** Enough files that a restore lasts long enough to be caught running (and stopped) from here. */
const FILES = 600;
const ATTEMPTS = 20;
const children: ChildProcess[] = [];
let fp: Forkpoint | undefined;
let dir: string | undefined;

afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  await fp?.close();
  if (dir) removeDir(dir);
});

const running = (db: string) => sqlOn<{ id: string }>(db, "SELECT id FROM moves WHERE status = 'running'");

/** Whether a transaction of another connection is open on the database (a process stopped inside one holds it). */
async function inTransaction(db: string): Promise<boolean> {
  if (onPostgres) {
    const open = "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'";
    return (await sqlOn<{ n: number }>(db, open))[0]!.n > 0;
  }
  const sqlite = new Database(db, { fileMustExist: true, timeout: 0 });
  try {
    sqlite.exec("BEGIN IMMEDIATE; ROLLBACK");
    return false;
  } catch {
    return true;
  } finally {
    sqlite.close();
  }
}

interface Setup {
  db: string;
  ws: string;
  s: SessionHandle;
  one: Checkpoint;
  two: Checkpoint;
  mover: Roller;
}

async function setUp(): Promise<Setup> {
  dir = makeTempDir("forkpoint-two-movers-");
  const ws = path.join(dir, "ws");
  fs.mkdirSync(ws);
  const db = path.join(dir, "forkpoint.db");
  const write = (v: string) => {
    fs.writeFileSync(path.join(ws, "a.txt"), `${v}\n`);
    for (let i = 0; i < FILES; i++) fs.writeFileSync(path.join(ws, `f${i}.txt`), `${v} ${i}\n`);
  };
  fp = openForkpoint({ path: db });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  write("one");
  const one = await s.checkpoint({ name: "one" });
  write("two");
  const two = await s.checkpoint({ name: "two" });
  return { db, ws, s, one, two, mover: await roller(db, s.id, children) };
}

/**
 * Rolls back to "one" here, then has the child undo that (files and all), stopped (SIGSTOP) while its move is
 * journaled for `whileStopped` to run; tries again until it is caught so. Then checks the undo landed where it was
 * meant, nothing journaled, and the session moves on.
 */
async function undoCaughtUnderWay({ db, ws, s, one, two, mover }: Setup, whileStopped: () => Promise<void>, landsAsSwitch = false) {
  const a = () => fs.readFileSync(path.join(ws, "a.txt"), "utf8");
  let caught = false;
  for (let attempt = 0; attempt < ATTEMPTS && !caught; attempt++) {
    let stopped = false;
    await s.rollback(one.id, { scope: "both" });
    const rolled = (await s.branches()).find((b) => b.current)!.id;
    expect(a()).toBe("one\n");
    mover.send("undo", "both");
    let answered = false;
    const answer = mover.answer().then((x) => ((answered = true), x));
    // Stops the child while its move is journaled; stopped inside one of its transactions (it would hold every other
    // writer up), it goes on a moment and is stopped again, until it is caught between two or its move ends.
    while (!answered && !stopped) {
      if ((await running(db)).length === 0) {
        await new Promise((r) => setImmediate(r));
        continue;
      }
      if (!mover.proc.kill("SIGSTOP")) break;
      if ((await running(db)).length > 0 && !(await inTransaction(db))) {
        caught = stopped = true;
        await whileStopped();
      }
      mover.proc.kill("SIGCONT");
      if (!stopped) await new Promise((r) => setTimeout(r, 1));
    }
    expect(await answer).toEqual({ ok: true });
    // The undo landed: back on the branch the rollback left, files and all; nothing journaled.
    expect(await running(db)).toEqual([]);
    expect((await s.branches()).find((b) => b.current)!.id).not.toBe(rolled);
    expect(a()).toBe("two\n");
    expect((await fp!.recover()).failed).toEqual([]);
    // And the session moves on, back to the rollback's branch: redo takes the rollback again (an undo that landed as a
    // switch is taken back by undo).
    await (stopped && landsAsSwitch ? s.undo({ scope: "both" }) : s.redo({ scope: "both" }));
    expect((await s.branches()).find((b) => b.current)!.id).toBe(rolled);
    expect(a()).toBe("one\n");
    await s.rollback(two.id, { scope: "both" });
    expect(a()).toBe("two\n");
  }
  expect(caught).toBe(true);
}

it("a move of another process under way refuses this one's moves, whatever their scope, and then lands", async () => {
  const setup = await setUp();
  await undoCaughtUnderWay(setup, async () => {
    for (const scope of ["conversation", "both", "files"] as const) {
      await expect(setup.s.rollback(setup.two.id, { scope })).rejects.toMatchObject({ code: "MOVE_IN_PROGRESS" });
      // (undo has no "files" scope: it moves the conversation)
      if (scope !== "files") await expect(setup.s.undo({ scope })).rejects.toMatchObject({ code: "MOVE_IN_PROGRESS" });
    }
  });
});

it("an undo whose history changed under it (as an earlier version let another process do) still lands", async () => {
  const setup = await setUp();
  // The rollback it takes back is no longer the newest standing move: its undo lands as the switch it is.
  const forget = () => sqlOn(setup.db, "UPDATE sessions SET move_top = NULL, move_redo = NULL WHERE id = $1", [setup.s.id]);
  await undoCaughtUnderWay(setup, () => forget().then(() => undefined), true);
});
