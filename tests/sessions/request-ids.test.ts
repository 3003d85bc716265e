// requestId on every write and move: a retried, double-clicked or duplicated call is applied once per session and
// answers as the first call did (across handles and processes too); the same id with other arguments is refused.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ConflictError, ValidationError, defineTool, type Forkpoint, type SessionHandle } from "../../src/index.js";
import { countRowsOf, dumpOf, openForkpoint } from "../fixtures/backend.js";
import {
  appendLineTool,
  explodeTool,
  heldWriteTool,
  readLog,
  tempDir,
  writeFileTool,
  type ToolCallRecord,
} from "../fixtures/file-tools.js";
import { startWorker } from "../fixtures/workers.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const WORKER = fileURLToPath(new URL("../fixtures/request-move-worker.ts", import.meta.url));

async function reused(call: () => Promise<unknown>): Promise<void> {
  const error = await rejectionOf(call);
  expect(error).toBeInstanceOf(ConflictError);
  expect(error.code).toBe("REQUEST_ID_REUSED");
}

/** A session with a question and an answer, a checkpoint after the question, and tools that log what they do. */
async function chat(options: { calls?: ToolCallRecord[] } = {}) {
  const calls = options.calls ?? [];
  const { fp, path: db } = dbs.open({ tools: [writeFileTool({ calls }), appendLineTool({ calls }), explodeTool({ calls })] });
  const s = await fp.createSession({ userId: "alice" });
  const [question] = await s.append({ role: "user", content: "plan a trip" });
  const asked = await s.checkpoint({ name: "asked" });
  const [answer] = await s.append({ role: "assistant", content: "Lisbon" });
  return { fp, db, s, question: question!, answer: answer!, asked, calls };
}

describe("requestId on writes", () => {
  it("setState: a retry returns the first state and writes nothing; other state or another verb is refused", async () => {
    const { db, s } = await chat();
    const first = await s.setState({ b: 1, a: [2] }, { requestId: "st" });
    await s.setState({ other: true });
    const rows = await countRowsOf(db);
    // Key order is no other argument: the state's canonical form is what is compared.
    expect(await s.setState({ a: [2], b: 1 }, { requestId: "st" })).toEqual(first);
    expect(await countRowsOf(db)).toEqual(rows);
    expect(await s.getState()).toEqual({ other: true });
    await reused(() => s.setState({ b: 2 }, { requestId: "st" }));
    await reused(() => s.append({ role: "user", content: "x" }, { requestId: "st" }));
    // An updater is applied once: the retry returns the state it made, not an update of the state now.
    const bump = (prev: any) => ({ ...prev, n: (prev.n ?? 0) + 1 });
    const bumped = await s.setState(bump, { requestId: "bump" });
    expect(await s.setState(bump, { requestId: "bump" })).toEqual(bumped);
    expect(await s.getState()).toEqual({ other: true, n: 1 });
  });

  it("checkpoint: a retry returns the same checkpoint; another name with the id is refused", async () => {
    const { db, s } = await chat();
    const cp = await s.checkpoint({ name: "mark", metadata: { by: "ui" }, requestId: "cp-1" });
    const rows = await countRowsOf(db);
    expect(await s.checkpoint({ name: "mark", metadata: { by: "ui" }, requestId: "cp-1" })).toEqual(cp);
    expect(await countRowsOf(db)).toEqual(rows);
    await reused(() => s.checkpoint({ name: "other", requestId: "cp-1" }));
    await s.deleteCheckpoint(cp.id);
    expect(await s.checkpoint({ name: "mark", metadata: { by: "ui" }, requestId: "cp-1" })).toEqual(cp);
  });

  it("update: a retry returns the info the first call returned, even after another update", async () => {
    const { db, s } = await chat();
    const first = await s.update({ title: "Trip", metadata: { a: 1 } }, { requestId: "u" });
    await s.update({ title: "Renamed" });
    const dump = await dumpOf(db);
    expect(await s.update({ title: "Trip", metadata: { a: 1 } }, { requestId: "u" })).toEqual(first);
    expect(await dumpOf(db)).toEqual(dump);
    await reused(() => s.update({ title: "Trip" }, { requestId: "u" }));
    await reused(() => s.update({ title: "Trip", metadata: null }, { requestId: "u" }));
  });

  it("deleteCheckpoint: a retry once the checkpoint is gone succeeds as the first call did", async () => {
    const { db, s, asked } = await chat();
    await s.deleteCheckpoint(asked.id, { requestId: "del" });
    const dump = await dumpOf(db);
    await expect(s.deleteCheckpoint(asked.id, { requestId: "del" })).resolves.toBeUndefined();
    expect(await dumpOf(db)).toEqual(dump);
    // Without the id, deleting it again is what it always was.
    expect((await rejectionOf(s.deleteCheckpoint(asked.id))).code).toBe("NOT_FOUND");
    const other = await s.checkpoint({ name: "other" });
    await reused(() => s.deleteCheckpoint(other.id, { requestId: "del" }));
    expect((await s.listCheckpoints()).items.map((c) => c.id)).toContain(other.id);
  });

  it("append and turn: a retry is compared with what the first call wrote, field by field", async () => {
    const { s } = await chat();
    const m = { role: "user", content: { text: "hi", n: [1, 2] }, clientId: "c1", metadata: { a: 1 } };
    const first = await s.append([m, { role: "assistant", content: "ok" }], { requestId: "a1" });
    expect(await s.append([m, { role: "assistant", content: "ok" }], { requestId: "a1" })).toEqual(first);
    for (const other of [
      { ...m, clientId: "c2" },
      { ...m, metadata: { a: 2 } },
      { ...m, content: { text: "hi", n: [1] } },
      { ...m, role: "system" },
    ])
      await reused(() => s.append([other, { role: "assistant", content: "ok" }], { requestId: "a1" }));
    await reused(() => s.append([m], { requestId: "a1" }));
    const turn = await s.turn([m], { name: "t", metadata: { k: "v" } }, { requestId: "t1" });
    expect(await s.turn([m], { name: "t", metadata: { k: "v" } }, { requestId: "t1" })).toEqual(turn);
    await reused(() => s.turn([m], { name: "t", metadata: { k: "w" } }, { requestId: "t1" }));
    await reused(() => s.turn([m], { name: "t" }, { requestId: "t1" }));
    await reused(() => s.checkpoint({ name: "t", metadata: { k: "v" }, requestId: "t1" }));
  });

  it("a retry whose JSON lists its keys in another order, or spells out a move's defaults, is the same call", async () => {
    const echo = defineTool({ name: "echo", run: (args) => args, undo: () => undefined });
    const { fp, path: db } = dbs.open({ tools: [echo] });
    const s = await fp.createSession({ userId: "alice" });
    // As a retry reads its arguments back from elsewhere (a PostgreSQL jsonb column, another language's JSON): reordered.
    const ab = { a: 1, b: { c: [1, { d: 2, e: 3 }], f: null } };
    const ba = { b: { f: null, c: [1, { e: 3, d: 2 }] }, a: 1 };
    const calls: [string, (v: typeof ab) => Promise<unknown>][] = [
      ["append", (v) => s.append({ role: "user", content: v, metadata: v }, { requestId: "append" })],
      ["turn", (v) => s.turn({ role: "user", content: v, metadata: v }, { name: "t", metadata: v }, { requestId: "turn" })],
      ["checkpoint", (v) => s.checkpoint({ name: "c", metadata: v, requestId: "checkpoint" })],
      ["invoke", (v) => s.invoke("echo", v, { requestId: "invoke" })],
      ["recordToolCall", (v) => s.recordToolCall({ tool: "echo", args: v, result: v }, { requestId: "record" })],
      [
        "failed recordToolCall",
        (v) =>
          s.recordToolCall(
            { tool: "echo", args: {}, error: v === ab ? { message: "m", name: "E" } : { name: "E", message: "m" } },
            { requestId: "fail" },
          ),
      ],
      ["setState", (v) => s.setState(v, { requestId: "state" })],
      ["update", (v) => s.update({ metadata: v }, { requestId: "update" })],
    ];
    for (const [verb, call] of calls) {
      const first = await call(ab);
      const rows = await countRowsOf(db);
      expect(await call(ba), verb).toEqual(first);
      expect(await countRowsOf(db), verb).toEqual(rows);
    }
    const [question] = await s.append({ role: "user", content: "q" });
    const [answer] = await s.append({ role: "assistant", content: "a" });
    const cp = await s.checkpoint({ name: "asked" });
    const edit = (v: typeof ab) =>
      s.edit(question!.id, { content: v, metadata: v }, { checkpoint: { name: "v2", metadata: v }, requestId: "edit" });
    const edited = await edit(ab);
    expect(await edit(ba)).toEqual(edited);
    await s.switchBranch(answer!.branchId);
    const regenerate = (v: typeof ab) => s.regenerate(answer!.id, { content: v }, { requestId: "regenerate" });
    const regenerated = await regenerate(ab);
    expect(await regenerate(ba)).toEqual(regenerated);
    // A move's options at their defaults are the options left out.
    const rolled = await s.rollback(cp.id, { requestId: "rollback" });
    const defaults = {
      onUndoError: "stop",
      refuseIrreversible: false,
      scope: "conversation",
      unregistered: "refuse",
      force: false,
    } as const;
    expect(await s.rollback(cp.id, { ...defaults, requestId: "rollback" })).toEqual(rolled);
    await reused(() => s.rollback(cp.id, { onUndoError: "continue", requestId: "rollback" }));
    await reused(() => s.append({ role: "user", content: { ...ab, a: 2 }, metadata: ab }, { requestId: "append" }));
    await reused(() => s.invoke("echo", { ...ab, g: 1 }, { requestId: "invoke" }));
  });

  it("recordToolCall: a retry returns the same invocation, recorded once", async () => {
    const { s } = await chat();
    const call = { tool: "write_file", args: { path: "/dev/null", text: "x" }, result: { previous: null }, callId: "c1" };
    const first = await s.recordToolCall(call, { requestId: "rec" });
    const again = await s.recordToolCall(call, { requestId: "rec" });
    expect(again).toEqual(first);
    expect(await s.toolTrack()).toHaveLength(1);
    await reused(() => s.recordToolCall({ ...call, callId: "c2" }, { requestId: "rec" }));
  });
});

describe("requestId on invoke: the tool runs once", () => {
  it("a retry returns the recorded result without running the tool; a failed call's retry rejects with its error", async () => {
    const dir = tempDir();
    const { s, calls } = await chat();
    const file = path.join(dir, "a.txt");
    const first = await s.invoke("write_file", { path: file, text: "one" }, { requestId: "w" });
    fs.writeFileSync(file, "changed by hand");
    expect(await s.invoke("write_file", { path: file, text: "one" }, { requestId: "w" })).toEqual(first);
    expect(fs.readFileSync(file, "utf8")).toBe("changed by hand");
    expect(calls.filter((c) => c.op === "run")).toHaveLength(1);
    expect(await s.toolTrack()).toHaveLength(1);
    await reused(() => s.invoke("write_file", { path: file, text: "two" }, { requestId: "w" }));
    await reused(() => s.invoke("append_line", { path: file, text: "one" }, { requestId: "w" }));

    const boom = await rejectionOf(s.invoke("explode", { path: file }, { requestId: "x" }));
    const again = await rejectionOf(s.invoke("explode", { path: file }, { requestId: "x" }));
    expect(again).toBeInstanceOf(Error);
    expect(again.message).toBe(boom.message);
    expect(again.name).toBe(boom.name);
    expect(calls.filter((c) => c.tool === "explode")).toHaveLength(1);
  });

  it("while the first call runs, a retry from another handle is CALL_IN_PROGRESS; once it ended, its result", async () => {
    const dir = tempDir();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const log = path.join(dir, "log.jsonl");
    let running!: () => void;
    const started = new Promise<void>((resolve) => (running = resolve));
    const { fp, path: db } = dbs.open({ tools: [heldWriteTool({ logFile: log, gate, onRun: () => running() })] });
    const s = await fp.createSession({ userId: "alice" });
    const other = dbs.track(openForkpoint({ path: db, tools: [heldWriteTool({ logFile: log })] }));
    const t = await other.getSession(s.id, { userId: "alice" });
    const args = { path: path.join(dir, "held.txt"), text: "held" };
    const first = s.invoke("held_write", args, { requestId: "held" });
    await started;
    for (const handle of [s, t]) {
      const busy = await rejectionOf(handle.invoke("held_write", args, { requestId: "held" }));
      expect(busy).toBeInstanceOf(ConflictError);
      expect(busy.code).toBe("CALL_IN_PROGRESS");
    }
    release();
    const result = await first;
    expect(await t.invoke("held_write", args, { requestId: "held" })).toEqual(result);
    expect(readLog(log).filter((c) => c.op === "run")).toHaveLength(1);
  });

  // Review 13: on PostgreSQL a retry whose read began before the call completed saw it running with no handler left,
  // and answered CALL_UNKNOWN ("left running by a process that died") for a call that was live (10-25% of rounds).
  it("two handles sending one id at once: a live call is never answered as left by a dead process", async () => {
    let runs = 0;
    const count = defineTool<{ k: number }, { ok: number }>({ name: "count", run: () => (runs++, { ok: 1 }), undo: () => {} });
    const { fp, path: db } = dbs.open({ tools: [count] });
    const s = await fp.createSession({ userId: "alice" });
    const other = dbs.track(openForkpoint({ path: db, tools: [count] }));
    const t = await other.getSession(s.id, { userId: "alice" });
    const codes = new Set<string>();
    for (let k = 0; k < 60; k++) {
      const both = [s, t].map((h) => h.invoke("count", { k }, { requestId: `c${k}` }).catch((e: ConflictError) => codes.add(e.code)));
      await Promise.all(both);
      expect(await t.invoke("count", { k }, { requestId: `c${k}` })).toEqual({ ok: 1 });
    }
    expect([...codes].filter((c) => c !== "CALL_IN_PROGRESS")).toEqual([]);
    expect(runs).toBe(60);
  });

  it("from two processes: the tool runs once, the second process is told it runs, then gets its result", async () => {
    const dir = tempDir();
    const { fp, path: db } = dbs.open({ tools: [heldWriteTool()] });
    const s = await fp.createSession({ userId: "alice" });
    const log = path.join(dir, "log.jsonl");
    const file = path.join(dir, "held.txt");
    const worker = () => startWorker(WORKER, [db, s.id, "alice", "invoke", "proc", file, log]);
    const a = worker();
    await a.ready;
    const seen = new Promise<void>((resolve) => a.child.stdout.on("data", (d: string) => d.includes("running") && resolve()));
    a.child.stdin.write("go\n");
    await seen;
    const b = worker();
    await b.ready;
    b.child.stdin.end("go\n");
    const second = await b.done;
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout.trim().split("\n").pop()!).error.code).toBe("CALL_IN_PROGRESS");
    a.child.stdin.end("go\n");
    const firstRun = await a.done;
    expect(firstRun.code, firstRun.stderr).toBe(0);
    const answer = JSON.parse(firstRun.stdout.trim().split("\n").pop()!);
    const c = worker();
    await c.ready;
    c.child.stdin.end("go\n");
    const third = await c.done;
    expect(JSON.parse(third.stdout.trim().split("\n").pop()!)).toEqual(answer);
    expect(readLog(log).filter((r) => r.op === "run")).toHaveLength(1);
    expect(await s.toolTrack()).toHaveLength(1);
  });
});

describe("requestId on moves: a retried or double-clicked move is made once", () => {
  /** A session moved twice (rollback, then switch back), with a tool call on the branch left each time. */
  async function moved(calls: ToolCallRecord[] = []) {
    const dir = tempDir();
    const c = await chat({ calls });
    await c.s.invoke("append_line", { path: path.join(dir, "log.txt"), line: "booked" });
    const first = (await c.s.info()).currentBranchId;
    await c.s.rollback(c.asked.id);
    return { ...c, dir, first };
  }

  const onBranch = async (s: SessionHandle) => (await s.info()).currentBranchId;

  it("a double-clicked undo with one id is one move: both clicks answer alike and one undo is left to make", async () => {
    const calls: ToolCallRecord[] = [];
    const { s, first, db } = await moved(calls);
    const rolledBack = await onBranch(s);
    await s.switchBranch(first);
    const undos = calls.filter((c) => c.op === "undo").length;
    const [a, b] = await Promise.all([s.undo({ requestId: "click-1" }), s.undo({ requestId: "click-1" })]);
    expect(b).toEqual(a);
    expect(a.branch.id).toBe(rolledBack);
    expect(await onBranch(s)).toBe(rolledBack);
    // The world moved once: the append_line call was undone once.
    expect(calls.filter((c) => c.op === "undo").length).toBe(undos + 1);
    const dump = await dumpOf(db);
    expect(await s.undo({ requestId: "click-1" })).toEqual(a);
    expect(await dumpOf(db)).toEqual(dump);
    // The second undo (another click) takes back the rollback, as a second move would.
    const next = await s.undo({ requestId: "click-2" });
    expect(next.branch.id).toBe(first);
    await reused(() => s.redo({ requestId: "click-2" }));
  });

  it("two handles undoing with one id at once: one move, the same answer", async () => {
    const { s, db, first } = await moved();
    const other = dbs.track(openForkpoint({ path: db, tools: [writeFileTool(), appendLineTool(), explodeTool()] }));
    const t = await other.getSession(s.id, { userId: "alice" });
    // A handle that finds the other's move with its id still running waits for it, then answers as it did.
    const values = await Promise.all([s.undo({ requestId: "u" }), t.undo({ requestId: "u" }), s.undo({ requestId: "u" })]);
    const settled = await t.undo({ requestId: "u" });
    for (const v of values) expect(v).toEqual(settled);
    expect(await onBranch(s)).toBe(first);
    expect((await s.branches()).length).toBe(2);
    expect((await rejectionOf(s.undo())).code).toBe("NOTHING_TO_UNDO");
  });

  it("a retry from another handle while the first attempt's undo still runs waits for it and answers as it did", async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const undone: string[] = [];
    const gated = defineTool<{ n: number }, null>({
      name: "gated",
      run: () => null,
      undo: async (_call, ctx) => {
        undone.push(ctx.invocationId);
        await gate;
      },
    });
    const { fp, path: db } = dbs.open({ tools: [gated] });
    const s = await fp.createSession({ userId: "alice" });
    const start = await s.checkpoint({ name: "start" });
    await s.invoke("gated", { n: 1 });
    const other = dbs.track(openForkpoint({ path: db, tools: [gated] }));
    const t = await other.getSession(s.id, { userId: "alice" });

    const first = s.rollback(start.id, { requestId: "rb-1" });
    while (undone.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    let retried = false;
    const retry = t.rollback(start.id, { requestId: "rb-1" }).finally(() => (retried = true));
    // The retry neither fails nor moves while the first attempt runs: it waits for it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(retried).toBe(false);
    open();
    const [a, b] = await Promise.all([first, retry]);
    expect(b).toEqual(a);
    expect(undone.length).toBe(1);
    expect((await s.branches()).length).toBe(2);
  });

  it("rollback and switchBranch: a retry makes no second branch and moves nothing", async () => {
    const { s, asked, first, db } = await moved();
    const rolled = await s.rollback(asked.id, { requestId: "rb" });
    const branches = (await s.branches()).length;
    await s.switchBranch(first);
    const dump = await dumpOf(db);
    expect(await s.rollback(asked.id, { requestId: "rb" })).toEqual(rolled);
    expect(await dumpOf(db)).toEqual(dump);
    expect((await s.branches()).length).toBe(branches);
    await reused(() => s.rollback(asked.id, { requestId: "rb", onUndoError: "continue" }));
    await reused(() => s.switchBranch(first, { requestId: "rb" }));
    const switched = await s.switchBranch(rolled.branch.id, { requestId: "sw" });
    expect(await s.switchBranch(rolled.branch.id, { requestId: "sw" })).toEqual(switched);
  });

  it("a retry answers exactly as the first call did, after its branch was named and its calls undone or replayed since", async () => {
    const { s, asked, first, dir } = await moved();
    // The first rollback undid the append_line call; a switch back replays it. Its answer said `applied: false`.
    const call = await s.recordToolCall(
      { tool: "write_file", args: { path: path.join(dir, "w.txt"), text: "w" }, result: { previous: null } },
      { requestId: "rec" },
    );
    expect(call.applied).toBe(true);
    await s.switchBranch(first);
    const rolled = await s.rollback(asked.id, { requestId: "rb" });
    expect(rolled.undone.map((t) => t.applied)).toEqual([false]);
    await s.nameBranch(rolled.branch.id, "named since");
    await s.switchBranch(first);
    expect(await s.rollback(asked.id, { requestId: "rb" })).toEqual(rolled);
    // The recorded call was undone by the switch away from its branch: its retry still says what the first call said.
    expect((await s.toolTrack({ branchId: call.branchId })).find((t) => t.id === call.id)?.applied).toBe(false);
    expect(
      await s.recordToolCall(
        { tool: "write_file", args: { path: path.join(dir, "w.txt"), text: "w" }, result: { previous: null } },
        { requestId: "rec" },
      ),
    ).toEqual(call);
  });

  it("a move that finds the session where it goes still records its id", async () => {
    const { s, db } = await moved();
    const here = await onBranch(s);
    const stay = await s.switchBranch(here, { requestId: "stay" });
    const rows = await countRowsOf(db);
    expect(await s.switchBranch(here, { requestId: "stay" })).toEqual(stay);
    expect(await countRowsOf(db)).toEqual(rows);
    await reused(() => s.undo({ requestId: "stay" }));
  });

  it("an edit or a regenerate sent twice with one id makes one version", async () => {
    const { s, question, answer, db } = await chat();
    const edited = await s.edit(question.id, { content: "plan a cheap trip" }, { requestId: "e", checkpoint: { name: "v2" } });
    const again = await s.edit(question.id, { content: "plan a cheap trip" }, { requestId: "e", checkpoint: { name: "v2" } });
    expect(again).toEqual(edited);
    expect(again.checkpoint?.name).toBe("v2");
    expect((await s.versions(question.id)).count).toBe(2);
    await reused(() => s.edit(question.id, { content: "plan another trip" }, { requestId: "e" }));
    await reused(() => s.edit(question.id, { content: "plan a cheap trip" }, { requestId: "e" }));

    await s.switchBranch(answer.branchId);
    const [r1, r2] = await Promise.all([
      s.regenerate(answer.id, { content: "Porto" }, { requestId: "regen" }),
      s.regenerate(answer.id, { content: "Porto" }, { requestId: "regen" }),
    ]);
    expect(r2).toEqual(r1);
    expect((await s.versions(answer.id)).count).toBe(2);
    const rows = await countRowsOf(db);
    expect(await s.regenerate(answer.id, { content: "Porto" }, { requestId: "regen" })).toEqual(r1);
    expect(await countRowsOf(db)).toEqual(rows);
    // An edit and a regenerate are other verbs: the same id for the other is another call.
    await reused(() => s.edit(answer.id, { content: "Porto" }, { requestId: "regen" }));
  });

  it("an edit's retry that spells out the role it left to its default (or the reverse) is the same call", async () => {
    const { s, question, db } = await chat();
    const edited = await s.edit(question.id, { content: "plan a cheap trip" }, { requestId: "implicit" });
    const rows = await countRowsOf(db);
    expect(await s.edit(question.id, { role: "user", content: "plan a cheap trip" }, { requestId: "implicit" })).toEqual(edited);
    expect(await countRowsOf(db)).toEqual(rows);
    // Another role than the original's is another call, whichever of the two spelled it.
    await reused(() => s.edit(question.id, { role: "assistant", content: "plan a cheap trip" }, { requestId: "implicit" }));

    const explicit = await s.edit(question.id, { role: "user", content: "plan a trip by train" }, { requestId: "explicit" });
    expect(await s.edit(question.id, { content: "plan a trip by train" }, { requestId: "explicit" })).toEqual(explicit);
    const other = await s.edit(question.id, { role: "assistant", content: "plan a trip by bus" }, { requestId: "other" });
    expect(other.message.role).toBe("assistant");
    await reused(() => s.edit(question.id, { content: "plan a trip by bus" }, { requestId: "other" }));
    expect((await s.versions(question.id)).count).toBe(4);

    // The other writes' defaults, spelled out or left out, are the same call too.
    const turn = await s.turn({ role: "user", content: "hi" }, undefined, { requestId: "turn" });
    expect(await s.turn({ role: "user", content: "hi", clientId: undefined }, {}, { requestId: "turn" })).toEqual(turn);
    const call = await s.recordToolCall({ tool: "echo", args: {} }, { requestId: "call" });
    expect(await s.recordToolCall({ tool: "echo", args: {}, result: null }, { requestId: "call" })).toEqual(call);
    const failed = await s.recordToolCall({ tool: "echo", args: {}, error: "boom" }, { requestId: "failed" });
    expect(await s.recordToolCall({ tool: "echo", args: {}, error: { message: "boom" } }, { requestId: "failed" })).toEqual(failed);
  });

  it("a move of the workspace's files too: a retry restores nothing again and answers with the files the first restored", async () => {
    const dir = tempDir();
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.attachWorkspace(dir);
    fs.writeFileSync(path.join(dir, "notes.md"), "v1");
    const v1 = await s.checkpoint({ name: "v1" });
    fs.writeFileSync(path.join(dir, "notes.md"), "v2");
    await s.checkpoint({ name: "v2" });
    const rolled = await s.rollback(v1.id, { scope: "both", requestId: "files" });
    expect(rolled.files?.written).toEqual(["notes.md"]);
    expect(fs.readFileSync(path.join(dir, "notes.md"), "utf8")).toBe("v1");
    fs.writeFileSync(path.join(dir, "notes.md"), "edited since");
    expect(await s.rollback(v1.id, { scope: "both", requestId: "files" })).toEqual(rolled);
    expect(fs.readFileSync(path.join(dir, "notes.md"), "utf8")).toBe("edited since");
    await reused(() => s.rollback(v1.id, { scope: "files", requestId: "files" }));
  });

  it("from two processes: one undo with one id moves the session once", async () => {
    const { s, db, first } = await moved();
    const dir = tempDir();
    const runs = [];
    for (let i = 0; i < 2; i++) {
      const w = startWorker(WORKER, [db, s.id, "alice", "undo", "proc-undo", path.join(dir, "unused"), path.join(dir, "log")]);
      await w.ready;
      w.child.stdin.end("go\n");
      runs.push(await w.done);
    }
    const answers = runs.map((r) => {
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout.trim().split("\n").pop()!);
    });
    expect(answers[0].ok.branch.id).toBe(first);
    expect(answers[1]).toEqual(answers[0]);
    expect(await onBranch(s)).toBe(first);
    // One undo was made: the rollback, the session's only move, is taken back; nothing is left to undo.
    expect((await rejectionOf(s.undo())).code).toBe("NOTHING_TO_UNDO");
  });
});

describe("a bad requestId, on any write or move", () => {
  /** Each of the 14 writes and moves, called with `options` (a session from `chat()`, with a move to undo and one to redo). */
  const verbs: [string, (c: Awaited<ReturnType<typeof chat>>, o: any) => Promise<unknown>][] = [
    ["append", (c, o) => c.s.append({ role: "user", content: "more" }, o)],
    ["turn", (c, o) => c.s.turn({ role: "user", content: "more" }, { name: "t" }, o)],
    ["setState", (c, o) => c.s.setState({ x: 1 }, o)],
    ["checkpoint", (c, o) => c.s.checkpoint({ name: "c", ...o })],
    ["invoke", (c, o) => c.s.invoke("append_line", { path: path.join(tempDir(), "log.txt"), line: "x" }, o)],
    ["recordToolCall", (c, o) => c.s.recordToolCall({ tool: "write_file", args: {}, result: null }, o)],
    ["update", (c, o) => c.s.update({ title: "new" }, o)],
    ["deleteCheckpoint", (c, o) => c.s.deleteCheckpoint(c.asked.id, o)],
    ["rollback", (c, o) => c.s.rollback(c.asked.id, o)],
    ["switchBranch", (c, o) => c.s.switchBranch(c.answer.branchId, o)],
    ["undo", (c, o) => c.s.undo(o)],
    ["redo", (c, o) => c.s.redo(o)],
    ["edit", (c, o) => c.s.edit(c.question.id, { content: "again" }, o)],
    ["regenerate", (c, o) => c.s.regenerate(c.answer.id, { content: "Porto" }, o)],
  ];
  const bad: [unknown, string][] = [
    ["", "VALIDATION_ERROR"],
    // Blank ids are what an unset header or form field gives: refused, as an empty one is (never trimmed otherwise).
    [" ", "VALIDATION_ERROR"],
    ["\t\r\n", "VALIDATION_ERROR"],
    ["\u00a0\u2003\ufeff", "VALIDATION_ERROR"],
    ["x".repeat(201), "VALIDATION_ERROR"],
    [7, "VALIDATION_ERROR"],
    [null, "VALIDATION_ERROR"],
    [["a"], "VALIDATION_ERROR"],
    ["a\ud800", "MALFORMED_TEXT"],
    ["a\u0000", "MALFORMED_TEXT"],
  ];

  it("is a ValidationError with a stable code on each of the 14 verbs, and nothing is written", async () => {
    const c = await chat();
    await c.s.rollback(c.asked.id);
    await c.s.undo();
    const dump = await dumpOf(c.db);
    for (const [verb, call] of verbs)
      for (const [requestId, code] of bad) {
        const error = await rejectionOf(call(c, { requestId }));
        const what = `${verb} ${JSON.stringify(requestId)}`;
        expect(error, what).toBeInstanceOf(ValidationError);
        expect([error.code, (error as ValidationError).field], what).toEqual([code, "requestId"]);
      }
    expect(await dumpOf(c.db)).toEqual(dump);
    // Spaces inside or around an id are part of it.
    const [a] = await c.s.append({ role: "user", content: "a" }, { requestId: " a " });
    const [b] = await c.s.append({ role: "user", content: "a" }, { requestId: "a" });
    expect(b!.id).not.toBe(a!.id);
  });
});

describe("a request id's records", () => {
  it("cost one row per call given an id (a checkpoint's is on its row), kept while the session is", async () => {
    const { fp, db, s, asked } = await chat();
    const before = await countRowsOf(db);
    await s.setState({ x: 1 }, { requestId: "1" });
    await s.checkpoint({ requestId: "2" });
    await s.rollback(asked.id, { requestId: "3" });
    await s.undo({ requestId: "4" });
    const after = await countRowsOf(db);
    expect(after.requests).toBe((before.requests ?? 0) + 3);
    expect(after.checkpoints).toBe((before.checkpoints ?? 0) + 1);
    await (fp as Forkpoint).deleteSession(s.id, { userId: "alice" });
    expect((await countRowsOf(db)).requests).toBe(0);
  });

  it("a tool's plain result is answered again as it was recorded", async () => {
    const echo = defineTool({ name: "echo", run: (args) => args });
    const { fp } = dbs.open({ tools: [echo] });
    const s = await fp.createSession({ userId: "alice" });
    expect(await s.invoke("echo", { a: 1 }, { requestId: "e" })).toEqual({ a: 1 });
    expect(await s.invoke("echo", { a: 1 }, { requestId: "e" })).toEqual({ a: 1 });
  });
});
