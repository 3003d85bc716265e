// A symbolic link made by hand where a rewind took a call's file away: a move back that replays the call is refused, forced or not.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { makeTempDir, rejectionOf, removeDir, restoringWriteTool } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;

beforeEach(() => {
  dir = makeTempDir("forkpoint-link-replay-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, "a.txt"), "A\n");
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [restoringWriteTool(ws)] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

/** A call that wrote t.txt, rewound with its files; then t.txt made by hand a link to a file outside the workspace. */
async function rewoundThenLinked() {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const a = await s.checkpoint({ name: "A" });
  const main = (await s.info()).currentBranchId;
  await s.invoke("write_file", { rel: "t.txt", text: "TOOL\n" });
  await s.rollback(a.id, { scope: "both" });
  const outside = path.join(dir, "precious.txt");
  fs.writeFileSync(outside, "PRECIOUS\n");
  fs.symlinkSync(outside, path.join(ws, "t.txt"));
  return { s, main, outside };
}

it("undo() of the rewind does not replay the call through the link", async () => {
  const { s, outside } = await rewoundThenLinked();
  for (const force of [false, true]) expect(await rejectionOf(s.undo({ force }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(fs.readFileSync(outside, "utf8")).toBe("PRECIOUS\n");
});

it("a switch back replays nothing through the link, and plan says it is blocked", async () => {
  const { s, main, outside } = await rewoundThenLinked();
  expect((await s.plan({ branchId: main })).blocked).toContain("t.txt is a symbolic link");
  for (const force of [false, true]) expect(await rejectionOf(s.switchBranch(main, { force }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(fs.readFileSync(outside, "utf8")).toBe("PRECIOUS\n");
  expect(fs.readlinkSync(path.join(ws, "t.txt"))).toBe(outside);
});
