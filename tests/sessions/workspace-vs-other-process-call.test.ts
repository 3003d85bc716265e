// Issue #32: a "files" rollback racing a call another server makes on the same session. The move plans the tool track
// (which calls the restored files hold) before it restores; a call started elsewhere after that plan wrote a line the
// restore then overwrote while its call stayed applied, or landed after the restore with the track already marked.
// Each is refused now (CALL_IN_PROGRESS, MOVE_IN_PROGRESS), and the file holds exactly the applied calls' lines. A
// checkpoint taken while the other server's call runs would hold part of its effect as not begun: refused too.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint, SessionHandle } from "../../src/index.js";
import { engineOf } from "../../src/sessions/forkpoint.js";
import { makeTempDir, removeDir, sleep } from "../helpers.js";
import { aroundWrites } from "../fixtures/around-writes.js";
import { openForkpoint } from "../fixtures/backend.js";
import { nodeArgs } from "../fixtures/compiled.js";
import { tagLineTool, tagLinesOf } from "../fixtures/file-tools.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
let dir: string;
let db: string;
let fp: Forkpoint;

beforeEach(() => {
  dir = makeTempDir("forkpoint-files-vs-call-");
  db = path.join(dir, "forkpoint.db");
  fp = openForkpoint({ path: db, tools: [tagLineTool()] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

/** A session whose workspace file holds a1 then a2 (checkpoints c1 after a1, c2 after a2). */
async function twoCalls() {
  const ws = path.join(dir, "ws");
  fs.mkdirSync(ws);
  const file = path.join(ws, "tag.txt");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.invoke("tag_line", { path: file, line: "a1" });
  const c1 = await s.checkpoint({ name: "c1" });
  await s.invoke("tag_line", { path: file, line: "a2" });
  await s.checkpoint({ name: "c2" });
  return { s, file, c1 };
}

/** The lines of the calls applied now, on any branch, and those in the file (tags dropped), each sorted. */
async function linesAndTrack(s: SessionHandle, file: string) {
  const applied = new Set<string>();
  for (const b of await s.branches())
    for (const t of await s.toolTrack({ branchId: b.id })) if (t.applied) applied.add((t.args as { line: string }).line);
  return {
    file: tagLinesOf(file)
      .map((l) => l.replace(/#\d+$/, ""))
      .sort(),
    applied: [...applied].sort(),
  };
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (error: { code?: string }) => error.code ?? String(error),
  );

it("a call another server starts once the files rollback is planned keeps the move from restoring", async () => {
  const { s, file, c1 } = await twoCalls();
  const hold = path.join(dir, "hold");
  fs.mkdirSync(hold);
  let child: Promise<string> | undefined;
  // The rollback has read the session and planned; before its first write, the other server's call runs (its line
  // written) and stays running.
  aroundWrites(fp, "before", async () => {
    const run = spawn(process.execPath, [...nodeArgs("tests/fixtures/invoke-child.ts"), db, s.id, "u", file, "b1", hold], { cwd: ROOT });
    let out = "";
    run.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child = new Promise((resolve) => run.on("close", () => resolve(out)));
    while (!fs.existsSync(path.join(hold, "running"))) await sleep(10);
    return true;
  });
  const moved = await codeOf(s.rollback(c1.id, { scope: "files" }));
  fs.writeFileSync(path.join(hold, "go"), "");
  const told = JSON.parse((await child!).trim().split("\n").at(-1)!) as { ok?: true; code?: string };
  expect(told).toEqual({ ok: true });
  expect(moved).toBe("CALL_IN_PROGRESS");
  expect(await linesAndTrack(s, file)).toEqual({ file: ["a1", "a2", "b1"], applied: ["a1", "a2", "b1"] });
});

it("a call another server starts while the files rollback restores is refused", async () => {
  const { s, file, c1 } = await twoCalls();
  let told: { ok?: true; code?: string; message?: string } | undefined;
  // The rollback's journal is written (its restore under way): the other server's call comes now.
  aroundWrites(fp, "after", async () => {
    if (!(await engineOf(fp).ctx.store.read((tx) => tx.getWorkspace(s.id)))?.restoring) return false;
    const run = spawnSync(process.execPath, [...nodeArgs("tests/fixtures/invoke-child.ts"), db, s.id, "u", file, "b1"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    told = JSON.parse(run.stdout.trim().split("\n").at(-1)!) as typeof told;
    return true;
  });
  expect(await codeOf(s.rollback(c1.id, { scope: "files" }))).toBeNull();
  expect(told?.code).toBe("MOVE_IN_PROGRESS");
  // Running in this live process, not interrupted: the refusal says to try again, not that recover() finishes it.
  expect(told?.message).toMatch(new RegExp(`is running \\(process ${process.pid}\\); try again when it ends`));
  expect(await linesAndTrack(s, file)).toEqual({ file: ["a1"], applied: ["a1"] });
});

/** Another server's call of `s`, appending `line`, held running (its line written) until `go()`. */
async function heldCall(s: SessionHandle, file: string, line: string) {
  const hold = path.join(dir, `hold-${line}`);
  fs.mkdirSync(hold);
  const run = spawn(process.execPath, [...nodeArgs("tests/fixtures/invoke-child.ts"), db, s.id, "u", file, line, hold], { cwd: ROOT });
  let out = "";
  run.stdout.on("data", (d: Buffer) => (out += d.toString()));
  const child = new Promise<string>((resolve) => run.on("close", () => resolve(out)));
  while (!fs.existsSync(path.join(hold, "running"))) await sleep(10);
  return {
    go: async () => {
      fs.writeFileSync(path.join(hold, "go"), "");
      return JSON.parse((await child).trim().split("\n").at(-1)!) as unknown;
    },
  };
}

it("a checkpoint while another server's call runs waits for it (busyTimeoutMs), then holds the call done", async () => {
  const { s, file } = await twoCalls();
  const call = await heldCall(s, file, "b1");
  // Past the handle's bound, refused with nothing written.
  const impatient = openForkpoint({ path: db, tools: [tagLineTool()], busyTimeoutMs: 300 });
  try {
    const mine = await impatient.getSession(s.id, { userId: "u" });
    expect(await codeOf(mine.checkpoint({ name: "mid-call" }))).toBe("CALL_IN_PROGRESS");
  } finally {
    await impatient.close();
  }
  // Within it (the default: 15 s), taken once the call ends.
  let taken = false;
  const waiting = s.checkpoint({ name: "after the call" }).then((cp) => ((taken = true), cp));
  await sleep(400);
  expect(taken).toBe(false);
  expect(await call.go()).toEqual({ ok: true });
  const after = await waiting;
  expect((await s.listCheckpoints()).items.map((c) => c.name)).not.toContain("mid-call");
  // The other server's call is held by the checkpoint's files: a "both" move away and back runs nothing again.
  const c2 = (await s.listCheckpoints()).items.find((c) => c.name === "c2")!;
  await s.rollback(c2.id, { scope: "both" });
  expect(tagLinesOf(file).map((l) => l.replace(/#\d+$/, ""))).toEqual(["a1", "a2"]);
  const back = await s.rollback(after.id, { scope: "both" });
  expect(back.replayed).toEqual([]);
  expect(await linesAndTrack(s, file)).toEqual({ file: ["a1", "a2", "b1"], applied: ["a1", "a2", "b1"] });
});

it("a plan made while another server's call runs says the move is refused, and counts that call not unknown", async () => {
  const { s, file, c1 } = await twoCalls();
  const call = await heldCall(s, file, "b1");
  for (const scope of ["conversation", "files", "both"] as const) {
    const planned = await s.plan({ checkpointId: c1.id, scope });
    expect(planned.blocked).toMatch(
      /a tool call of this session is running \("tag_line" tc_\S+, process \d+\): the move is refused \(CALL_IN_PROGRESS\)/,
    );
    expect(planned.unknown).toEqual([]);
    expect(await codeOf(s.rollback(c1.id, { scope }))).toBe("CALL_IN_PROGRESS");
  }
  expect(await call.go()).toEqual({ ok: true });
  expect((await s.plan({ checkpointId: c1.id, scope: "both" })).blocked).toBeUndefined();
});
