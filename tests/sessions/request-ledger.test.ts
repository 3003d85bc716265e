// The request ledger: a write given a requestId is applied once per session, whoever retries it (the same handle,
// another handle, another process, after a crash around the commit); the same id with other arguments is refused.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ConflictError, ValidationError, type Checkpoint, type Message } from "../../src/index.js";
import { turnAnswer } from "../../src/sessions/requests/answers.js";
import { countRowsOf, dumpOf, openForkpoint, sqlOn } from "../fixtures/backend.js";
import { startWorker } from "../fixtures/workers.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const WORKER = fileURLToPath(new URL("../fixtures/request-worker.ts", import.meta.url));

const question = (text: string) => [
  { role: "user", content: text },
  { role: "assistant", content: `re: ${text}` },
];

async function chat() {
  const { fp, path } = dbs.open();
  const s = await fp.createSession({ userId: "alice" });
  await s.append({ role: "system", content: "be brief" });
  return { fp, path, s };
}

/** The JSON a child printed, with its times as the Dates the API returns. */
const revive = (value: any): any =>
  JSON.parse(JSON.stringify(value), (key, v) => ((key === "createdAt" || key === "expiresAt") && typeof v === "string" ? new Date(v) : v));

describe("a write given a requestId", () => {
  it("append: a retry writes nothing, emits nothing and returns what the first call returned", async () => {
    const { fp, path, s } = await chat();
    const first = await s.append(question("hi"), { requestId: "req-1" });
    expect(first.map((m) => m.position)).toEqual([2, 3]);
    const dump = await dumpOf(path);
    const heard: unknown[] = [];
    fp.on("checkpoint", (cp) => void heard.push(cp));
    expect(await s.append(question("hi"), { requestId: "req-1" })).toEqual(first);
    expect(await s.append(question("hi"), { requestId: "req-1" })).toEqual(first);
    expect(await dumpOf(path)).toEqual(dump);
    expect(heard).toEqual([]);
    expect((await s.history()).map((m) => m.content)).toEqual(["be brief", "hi", "re: hi"]);
  });

  it("turn: a retry returns the same messages and checkpoint, even after the checkpoint is deleted", async () => {
    const { path, s } = await chat();
    const first = await s.turn(question("q"), { name: "turn 1", metadata: { n: 1 }, expiresIn: "2h" }, { requestId: "t-1" });
    const rows = await countRowsOf(path);
    const again = await s.turn(question("q"), { name: "turn 1", metadata: { n: 1 }, expiresIn: "2h" }, { requestId: "t-1" });
    expect(again).toEqual(first);
    expect(again.checkpoint.createdAt).toBeInstanceOf(Date);
    expect(await countRowsOf(path)).toEqual(rows);
    await s.deleteCheckpoint(first.checkpoint.id);
    expect(await s.turn(question("q"), { name: "turn 1", metadata: { n: 1 }, expiresIn: "2h" }, { requestId: "t-1" })).toEqual(first);
    expect((await s.history()).length).toBe(3);
  });

  it("a turn's record is on its checkpoint's row; one an earlier version kept in the ledger's table still answers", async () => {
    const { path, s } = await chat();
    const before = (await countRowsOf(path)).requests ?? 0;
    const first = await s.turn(question("q"), { name: "t", metadata: { n: [1] }, expiresIn: 60_000 }, { requestId: "old" });
    expect((await countRowsOf(path)).requests ?? 0).toBe(before);
    expect(await sqlOn(path, `SELECT request_id AS r FROM checkpoints WHERE id = $1`, [first.checkpoint.id])).toEqual([{ r: "old" }]);
    // As an earlier version recorded it: the row in the ledger's table, the checkpoint whole in its answer.
    await sqlOn(path, `UPDATE checkpoints SET request_id = NULL, request_fingerprint = NULL, request_answer = NULL WHERE id = $1`, [
      first.checkpoint.id,
    ]);
    await sqlOn(path, `INSERT INTO requests (session_id, request_id, fingerprint, answer, created_at) VALUES ($1, $2, $3, $4, $5)`, [
      s.id,
      "old",
      "=turn",
      turnAnswer.encode({ ...first, expiresIn: 60_000 }),
      Date.now(),
    ]);
    const dump = await dumpOf(path);
    expect(await s.turn(question("q"), { name: "t", metadata: { n: [1] }, expiresIn: 60_000 }, { requestId: "old" })).toEqual(first);
    const reused = await rejectionOf(() => s.turn(question("q"), { name: "other" }, { requestId: "old" }));
    expect(reused).toMatchObject({ code: "REQUEST_ID_REUSED" });
    expect(await dumpOf(path)).toEqual(dump);
  });

  it("retention and prune keep the records: a retry after its checkpoint was expired and pruned answers as the first", async () => {
    const { fp, path, s } = await chat();
    const first = await s.turn(question("q"), { name: "turn 1" }, { requestId: "t-1" });
    const appended = await s.append(question("more"), { requestId: "a-1" });
    await s.setRetention({ keepLast: 1 });
    await s.turn(question("later"), { name: "turn 2" });
    await s.turn(question("latest"), { name: "turn 3" });
    expect((await fp.prune()).checkpoints).toBeGreaterThan(0);
    expect((await s.listCheckpoints()).items.map((c) => c.id)).not.toContain(first.checkpoint.id);
    expect((await countRowsOf(path)).requests).toBe(2);
    expect(await s.turn(question("q"), { name: "turn 1" }, { requestId: "t-1" })).toEqual(first);
    expect(await s.append(question("more"), { requestId: "a-1" })).toEqual(appended);
    expect((await countRowsOf(path)).requests).toBe(2);
  });

  it("an empty append and a turn without messages are requests too", async () => {
    const { path, s } = await chat();
    expect(await s.append([], { requestId: "none" })).toEqual([]);
    const cp = await s.turn([], undefined, { requestId: "mark" });
    const rows = await countRowsOf(path);
    expect(await s.append([], { requestId: "none" })).toEqual([]);
    expect(await s.turn([], undefined, { requestId: "mark" })).toEqual(cp);
    expect(await countRowsOf(path)).toEqual(rows);
  });

  it("the same id with other arguments, or for another verb, is REQUEST_ID_REUSED and writes nothing", async () => {
    const { path, s } = await chat();
    await s.append(question("one"), { requestId: "r" });
    await s.turn(question("two"), { name: "a" }, { requestId: "t" });
    const dump = await dumpOf(path);
    const refusals = [
      () => s.append(question("other"), { requestId: "r" }),
      () => s.append([{ role: "user", content: "one" }], { requestId: "r" }),
      () => s.append([{ ...question("one")[0]!, metadata: { x: 1 } }, question("one")[1]!], { requestId: "r" }),
      () => s.turn(question("one"), undefined, { requestId: "r" }),
      () => s.turn(question("two"), { name: "b" }, { requestId: "t" }),
      () => s.turn(question("two"), { name: "a", expiresIn: 1000 }, { requestId: "t" }),
      () => s.append(question("two"), { requestId: "t" }),
    ];
    for (const call of refusals) {
      const error = await rejectionOf(call);
      expect(error).toBeInstanceOf(ConflictError);
      expect(error.code).toBe("REQUEST_ID_REUSED");
    }
    expect(await dumpOf(path)).toEqual(dump);
  });

  it("ids are per session: another session applies the same id as its own", async () => {
    const { fp, s } = await chat();
    const other = await fp.createSession({ userId: "alice" });
    const mine = await s.append(question("x"), { requestId: "shared" });
    const theirs = await other.append(question("x"), { requestId: "shared" });
    expect(theirs[0]!.id).not.toBe(mine[0]!.id);
    expect((await other.history()).length).toBe(2);
  });

  it("a retry after the session moved on answers as the first call, on the branch it landed on", async () => {
    const { s } = await chat();
    const start = await s.checkpoint({ name: "start" });
    const first = await s.append(question("before"), { requestId: "a" });
    await s.append({ role: "user", content: "later" });
    await s.rollback(start.id);
    expect(await s.append(question("before"), { requestId: "a" })).toEqual(first);
    expect((await s.history()).map((m) => m.content)).toEqual(["be brief"]);
  });

  it("holds across handles: concurrent retries from two handles apply the call once and all answer alike", async () => {
    const { path, s } = await chat();
    const other = dbs.track(openForkpoint({ path }));
    const t = await other.getSession(s.id, { userId: "alice" });
    const calls = Array.from({ length: 6 }, (_, i) =>
      (i % 2 === 0 ? s : t).turn(question("race"), { name: "race" }, { requestId: "race" }),
    );
    const answers = await Promise.all(calls);
    for (const a of answers) expect(a).toEqual(answers[0]);
    expect((await s.history()).map((m) => m.content)).toEqual(["be brief", "race", "re: race"]);
    expect((await s.listCheckpoints({ name: "race" })).items).toHaveLength(1);
  });

  it("holds across processes: another process's retry answers with the first process's messages", async () => {
    const { path, s } = await chat();
    const runs = [];
    for (const text of ["from a child", "from a child"]) {
      const w = startWorker(WORKER, [path, s.id, "alice", "turn", "child-req", text]);
      await w.ready;
      w.child.stdin.end("go\n");
      runs.push(await w.done);
    }
    const answers = runs.map((r) => {
      expect(r.code, r.stderr).toBe(0);
      return revive(JSON.parse(r.stdout.trim().split("\n").pop()!)) as { messages: Message[]; checkpoint: Checkpoint };
    });
    expect(answers[1]).toEqual(answers[0]);
    expect(await s.turn(question("from a child"), { name: "from a child" }, { requestId: "child-req" })).toEqual(answers[0]);
    expect((await s.history()).map((m) => m.content)).toEqual(["be brief", "from a child", "re: from a child"]);
  });

  it("a retry after the caller died around its commit (killed at any point) leaves the call applied exactly once", async () => {
    const { path, s } = await chat();
    for (let round = 0; round < 4; round++) {
      const requestId = `crash-${round}`;
      const w = startWorker(WORKER, [path, s.id, "alice", "append", requestId, `round ${round}`]);
      await w.ready;
      // Killed once it starts the call, at a different point of it each round: before, during or after the commit.
      w.child.stdout.on("data", (chunk: string) => {
        if (!chunk.includes("calling")) return;
        let ticks = round * 3;
        const later = () => (ticks-- > 0 ? setImmediate(later) : w.child.kill("SIGKILL"));
        later();
      });
      w.child.stdin.end("go\n");
      await w.done;
      const answer = await s.append(question(`round ${round}`), { requestId });
      expect(answer.map((m) => m.content)).toEqual([`round ${round}`, `re: round ${round}`]);
    }
    const contents = (await s.history()).map((m) => m.content);
    expect(contents).toEqual(["be brief", ...[0, 1, 2, 3].flatMap((r) => [`round ${r}`, `re: round ${r}`])]);
  });

  it("a requestId is non-empty text of at most 200 characters: anything else is a ValidationError, nothing written", async () => {
    const { path, s } = await chat();
    const dump = await dumpOf(path);
    const bad: unknown[] = [
      { requestId: "" },
      { requestId: "x".repeat(201) },
      { requestId: 7 },
      { requestId: null },
      { requestID: "a" },
      "a",
    ];
    for (const options of bad) {
      for (const call of [() => s.append(question("no"), options as never), () => s.turn(question("no"), undefined, options as never)]) {
        const error = await rejectionOf(call);
        expect(error, JSON.stringify(options)).toBeInstanceOf(ValidationError);
      }
    }
    const lone = await rejectionOf(s.append(question("no"), { requestId: "a\ud800" }));
    expect(lone.code).toBe("MALFORMED_TEXT");
    expect(await dumpOf(path)).toEqual(dump);
    // The bounds themselves are fine, taken exactly as given (spaces are part of an id).
    await s.append(question("long"), { requestId: "y".repeat(200) });
    await s.append(question("spaced"), { requestId: " y " });
    await s.append(question("other spaced"), { requestId: "y" });
    expect((await s.history()).length).toBe(7);
  });

  it("writes without a requestId record nothing in the ledger; a deleted session's records go with it", async () => {
    const { fp, path, s } = await chat();
    await s.append(question("plain"));
    await s.turn(question("plain turn"), { name: "p" });
    expect((await countRowsOf(path)).requests).toBe(0);
    await s.append(question("kept"), { requestId: "k" });
    expect((await countRowsOf(path)).requests).toBe(1);
    await fp.deleteSession(s.id, { userId: "alice" });
    expect((await countRowsOf(path)).requests).toBe(0);
  });
});
