// resolveToolCall on a call whose replay a SIGKILL interrupted (a move reported it unknown): the outcome is the
// replay's, and the applied set follows it; no later move touches the call until it is resolved.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineTool, type Forkpoint, type SessionHandle } from "../../src/index.js";
import { readOrNull, type WriteArgs, type WriteResult } from "../fixtures/file-tools.js";
import { expireLeases, openForkpoint } from "../fixtures/backend.js";
import { startWorker } from "../fixtures/workers.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";

const WORKER = fileURLToPath(new URL("../fixtures/stalled-move.ts", import.meta.url));
let dir: string;
let db: string;
let fp: Forkpoint;
/** Undone with the result it is handed: what a resolved replay recorded reaches it. */
const undone: unknown[] = [];
const stallWrite = defineTool<WriteArgs, WriteResult>({
  name: "stall_write",
  run: (args) => (fs.writeFileSync(args.path, args.text), { previous: null }),
  undo: ({ args, result }) => (undone.push(result), fs.rmSync(args.path, { force: true })),
});
const open = (recover = true) => (fp = openForkpoint({ path: db, tools: [stallWrite], recover }));

beforeEach(() => {
  dir = makeTempDir("forkpoint-unknown-step-");
  db = path.join(dir, "forkpoint.db");
  undone.length = 0;
});
afterEach(async () => {
  await fp?.close();
  removeDir(dir);
});

/** stall_write (to `file`) after `start`, undone by a rollback; a child's switch back is killed inside its replay. */
async function killedInsideReplay(
  file = path.join(dir, "out.txt"),
): Promise<{ s: SessionHandle; start: string; root: string; call: string; file: string }> {
  let s = await open().createSession({ userId: "u" });
  const start = (await s.checkpoint({ name: "start" })).id;
  await s.invoke("stall_write", { path: file, text: "s" });
  const call = (await s.toolTrack())[0]!.id;
  const root = (await s.info()).currentBranchId;
  await s.rollback(start);
  expect(readOrNull(file)).toBeNull();
  await fp.close();

  const marker = path.join(dir, "stalled");
  const w = startWorker(WORKER, [db, s.id, "switch", root, "conversation", marker]);
  while (!fs.existsSync(marker) && w.child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
  w.child.kill("SIGKILL");
  expect((await w.done).stderr).toBe("");
  await expireLeases(db);
  open(false);
  const report = await fp.recover();
  expect(report.resumed.flatMap((r) => r.unknown.map((t) => t.id))).toEqual([call]);
  s = await fp.getSession(s.id, { userId: "u" });
  expect((await s.toolTrack())[0]!.applied).toBe(false);
  undone.length = 0;
  return { s, start, root, call, file };
}

it("a replay resolved as finished applies the call with its result, which its next undo receives", async () => {
  const { s, start, call, file } = await killedInsideReplay();
  // Unresolved, a move passes it by as unknown.
  expect((await s.plan({ checkpointId: start })).unknown.map((t) => t.id)).toEqual([call]);
  fs.writeFileSync(file, "s");
  const resolved = await s.resolveToolCall(call, { status: "succeeded", result: { previous: "by the replay" } });
  expect([resolved.status, resolved.applied]).toEqual(["succeeded", true]);
  expect((await rejectionOf(s.resolveToolCall(call, { status: "succeeded", result: null }))).code).toBe("CALL_NOT_UNKNOWN");

  const back = await s.rollback(start);
  expect(back.undone.map((t) => t.id)).toEqual([call]);
  expect(undone).toEqual([{ previous: "by the replay" }]);
  expect(readOrNull(file)).toBeNull();
});

it("a replay resolved as failed leaves the call unapplied: the next move to its branch replays it", async () => {
  const { s, root, call, file } = await killedInsideReplay();
  const resolved = await s.resolveToolCall(call, { status: "failed", error: "killed before it wrote" });
  expect([resolved.status, resolved.applied]).toEqual(["succeeded", false]);

  const again = await s.switchBranch(root);
  expect(again.replayed.map((t) => t.id)).toEqual([call]);
  expect(again.unknown).toEqual([]);
  expect(readOrNull(file)).toBe("s");
});

// A replay resolved as finished is an application with its result, kept past prune as a replay's: files restored later
// hold its effect, so the call marked applied again by them carries that result, not its first run's.
it("a replay resolved as finished keeps its result past prune for a call restored files mark applied again", async () => {
  const ws = path.join(dir, "ws");
  fs.mkdirSync(ws);
  const { s, start, root, call, file } = await killedInsideReplay(path.join(ws, "out.txt"));
  fs.writeFileSync(file, "s");
  await s.resolveToolCall(call, { status: "succeeded", result: { previous: "by the replay" } });
  await s.attachWorkspace(ws);
  await s.checkpoint({ name: "at" }); // captures the resolved replay's effect
  await s.rollback(start, { scope: "conversation" });
  expect([undone, readOrNull(file)]).toEqual([[{ previous: "by the replay" }], null]);
  expect((await fp.prune()).moves).toBeGreaterThan(0);

  undone.length = 0;
  const back = await s.switchBranch(root, { scope: "both" });
  expect([back.replayed, readOrNull(file)]).toEqual([[], "s"]);
  await s.rollback(start, { scope: "conversation" });
  expect(undone).toEqual([{ previous: "by the replay" }]);
});
