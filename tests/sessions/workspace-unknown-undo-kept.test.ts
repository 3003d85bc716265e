// A process SIGKILLed inside an undo handler before it changed anything, during a forced "both" rollback: the call its
// undo was running for is of unknown outcome and still applied, and its file is still there. Every later "both" move
// (plan, unforced, forced, one with no step to run) keeps that file as it is until resolveToolCall says what happened.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineTool, type Forkpoint } from "../../src/index.js";
import { readOrNull, writeFileTool, type WriteArgs, type WriteResult } from "../fixtures/file-tools.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { expireLeases, openForkpoint } from "../fixtures/backend.js";
import { startWorker } from "../fixtures/workers.js";

const WORKER = fileURLToPath(new URL("../fixtures/half-undone-move.ts", import.meta.url));
let dir: string;
let ws: string;
let db: string;
let fp: Forkpoint;

const file = (rel: string) => path.join(ws, rel);
const files = () => ({ a: readOrNull(file("a.txt")), g0: readOrNull(file("g0.txt")) });
/** stall_write makes its file (its undo deletes it; in the child, the undo stalls before it does). */
const stallWrite = defineTool<WriteArgs, WriteResult>({
  name: "stall_write",
  run: (args) => (fs.appendFileSync(args.path, args.text), { previous: null }),
  undo: ({ args }) => fs.rmSync(args.path, { force: true }),
});
const open = (recover = true) => (fp = openForkpoint({ path: db, tools: [writeFileTool(), stallWrite], recover }));

beforeEach(() => {
  dir = makeTempDir("forkpoint-unknown-kept-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  db = path.join(dir, "forkpoint.db");
});
afterEach(async () => {
  await fp?.close();
  removeDir(dir);
});

it("a call whose undo a crash interrupted keeps the file it made in every later move until resolved", async () => {
  fs.writeFileSync(file("a.txt"), "0");
  let s = await open().createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("stall_write", { path: file("g0.txt"), text: "s" });
  const stalled = (await s.toolTrack())[0]!.id;
  await s.invoke("write_file", { path: file("a.txt"), text: "1" });
  await fp.close();

  const marker = path.join(dir, "stalled");
  const w = startWorker(WORKER, [db, s.id, start.id, marker, "before", "force"]);
  while (!fs.existsSync(marker) && w.child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
  w.child.kill("SIGKILL");
  expect((await w.done).stderr).toBe("");
  await expireLeases(db);
  open(false);
  const report = await fp.recover();
  expect(report.unknown.map((t) => t.id)).toEqual([stalled]);
  expect(report.failed).toEqual([]);
  expect(files()).toEqual({ a: "0", g0: "s" });
  s = await fp.getSession(s.id, { userId: "u" });

  // The session is at `start` already: no step runs, and the file stays (it was deleted as the target has none).
  const planned = await s.plan({ checkpointId: start.id, scope: "both" });
  expect(planned.files).toEqual({ written: [], deleted: [], kept: ["g0.txt"] });
  for (const force of [false, true]) {
    const moved = await s.rollback(start.id, { scope: "both", force });
    expect(moved.unknown.map((t) => t.id)).toEqual([stalled]);
    expect(moved.files).toEqual({ written: [], deleted: [], kept: ["g0.txt"] });
    expect(files()).toEqual({ a: "0", g0: "s" });
  }

  // Said to have changed nothing, the call is applied: the next rewind undoes it.
  const resolved = await s.resolveToolCall(stalled, { status: "failed", error: "killed before it deleted anything" });
  expect(resolved.applied).toBe(true);
  const undone = await s.rollback(start.id, { scope: "both" });
  expect(undone.undone.map((t) => t.id)).toEqual([stalled]);
  expect(files()).toEqual({ a: "0", g0: null });
});
