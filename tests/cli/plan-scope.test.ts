// `forkpoint plan --scope files|both`: a workspace session's move planned as that move restores its files (what it
// writes and deletes, the drift it refuses), as the API's plan({ scope }) says; without --scope, the conversation's.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { runInProcess } from "./in-process.js";

let dir = "";
let db = "";
let ws = "";
const ids = { session: "", start: "" };

beforeAll(async () => {
  dir = makeTempDir("forkpoint-cli-plan-scope-");
  db = path.join(dir, "cli.db");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, "plan.md"), "draft 1\n");
  const fp = openForkpoint({ path: db });
  const s = await fp.createSession({ userId: "ann" });
  await s.attachWorkspace(ws);
  ids.start = (await s.checkpoint({ name: "start" })).id;
  fs.writeFileSync(path.join(ws, "plan.md"), "draft 2\n");
  fs.writeFileSync(path.join(ws, "notes.md"), "n\n");
  await s.checkpoint({ name: "drafted" });
  ids.session = s.id;
  await fp.close();
});
afterAll(() => removeDir(dir));

const plan = (...extra: string[]) => runInProcess(["--db", db, "plan", ids.session, "-c", ids.start, "-u", "ann", ...extra]);

it("--scope files: the files it would write and delete, as text and as JSON; none without --scope", async () => {
  const text = await plan("--scope", "files");
  expect(text).toMatchObject({ status: 0, stderr: "" });
  expect(text.stdout).toContain("files         1 to write, 1 to delete\n");
  expect(text.stdout).not.toContain("drift");
  const json = JSON.parse(
    (await runInProcess(["--db", db, "--json", "plan", ids.session, "-c", ids.start, "-u", "ann", "--scope", "both"])).stdout,
  );
  expect(json).toMatchObject({ files: { written: ["plan.md"], deleted: ["notes.md"] }, drift: [] });
  const conversation = await plan();
  expect(conversation.status).toBe(0);
  expect(conversation.stdout).not.toMatch(/^files /m);
});

it("--scope both: a file saved by hand since is named as the drift the move refuses without --force", async () => {
  fs.writeFileSync(path.join(ws, "notes.md"), "my own\n");
  const text = await plan("--scope", "both");
  expect(text.status).toBe(0);
  expect(text.stdout).toContain("drift         1: notes.md (refused without --force)\n");
  fs.writeFileSync(path.join(ws, "notes.md"), "n\n");
});

it("one files section, and a files-only move that writes files is not 'nothing would move'", async () => {
  for (const scope of ["files", "both"]) {
    const text = await plan("--scope", scope);
    expect(text.status).toBe(0);
    expect(text.stdout.match(/^files /gm)).toEqual(["files "]);
    expect(text.stdout).toContain("files         1 to write, 1 to delete\n");
    expect(text.stdout).not.toContain("nothing would move");
  }
  expect((await plan("--scope", "files")).stdout).toMatch(/^would stay on branch br_\S+ at position 2 \(no branch is made\)\n/);
});

it("rollback --dry-run --scope plans the move of that scope, as plan --scope does", async () => {
  const dry = await runInProcess(["--db", db, "--json", "rollback", ids.session, ids.start, "-u", "ann", "--dry-run", "--scope", "both"]);
  expect(dry).toMatchObject({ status: 0, stderr: "" });
  expect(JSON.parse(dry.stdout)).toMatchObject({ files: { written: ["plan.md"], deleted: ["notes.md"] }, drift: [] });
  const conversation = await runInProcess(["--db", db, "--json", "rollback", ids.session, ids.start, "-u", "ann", "--dry-run"]);
  expect(JSON.parse(conversation.stdout).files).toBeUndefined();
});

it("a files-only rollback that writes files says it stays on the branch, not that nothing moved", async () => {
  const done = await runInProcess(["--db", db, "rollback", ids.session, ids.start, "-u", "ann", "--scope", "files"]);
  expect(done).toMatchObject({ status: 0, stderr: "" });
  expect(done.stdout).toMatch(/^still on branch br_\S+ at position 2 \(no branch was made\)\nfiles         1 written, 1 deleted\n$/);
  expect(fs.readFileSync(path.join(ws, "plan.md"), "utf8")).toBe("draft 1\n");
});

it("a scope that is not one is a usage error", async () => {
  const bad = await plan("--scope", "everything");
  expect(bad.status).toBe(2);
  expect(bad.stderr).toContain('--scope must be conversation, files or both, not "everything"');
});
