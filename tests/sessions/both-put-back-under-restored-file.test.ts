// A "both" move whose undo puts back a hand edit g/h.txt (kept) while its target holds a file g: the restore cannot
// write g over the folder holding it, nor g/h.txt under a file g. The plan says so in `blocked`, and the move refuses
// before any undo runs, forced or not, nothing changed on disk (review rv3: r-kept-folder).
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { deleteFileTool, readOrNull, tempDir } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

async function keptUnderFile() {
  const ws = tempDir("forkpoint-kept-under-file-");
  const at = (rel: string) => path.join(ws, rel);
  fs.writeFileSync(at("a.txt"), "a0");
  const { fp } = dbs.open({ tools: [deleteFileTool()] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  fs.writeFileSync(at("g"), "HAND-G"); // a file g, by hand
  const saved = (await s.rollback(c0.id, { scope: "files", force: true })).savedDrift!.checkpointId; // holds the file g
  fs.mkdirSync(at("g"));
  fs.writeFileSync(at("g/h.txt"), "HAND-H"); // g a folder now, by hand
  await s.invoke("delete_file", { path: at("g/h.txt") }); // its undo puts HAND-H back
  return { s, saved, at };
}

it('the plan of a "both" move whose put-back hand edit is under a file it writes says blocked', async () => {
  const { s, saved } = await keptUnderFile();
  const plan = await s.plan({ checkpointId: saved, scope: "both" });
  expect(plan.blocked).toMatch(/g is a directory holding g\/h\.txt/);
});

for (const force of [false, true])
  it(`a "both" move whose put-back hand edit is under a file it writes refuses before its undos (force ${force})`, async () => {
    const { s, saved, at } = await keptUnderFile();
    expect(await rejectionOf(s.rollback(saved, { scope: "both", force }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
    // Nothing changed: the undo did not run, the call stays applied.
    expect(readOrNull(at("g/h.txt"))).toBeNull();
    expect(fs.statSync(at("g")).isDirectory()).toBe(true);
    expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true]);
  });

it('a "both" move whose put-back hand edit is a file where it writes one below: blocked, refused before its undos', async () => {
  const ws = tempDir("forkpoint-kept-over-folder-");
  const at = (rel: string) => path.join(ws, rel);
  fs.writeFileSync(at("a.txt"), "a0");
  const { fp } = dbs.open({ tools: [deleteFileTool()] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  fs.mkdirSync(at("g"));
  fs.writeFileSync(at("g/h.txt"), "HAND-H"); // by hand
  const saved = (await s.rollback(c0.id, { scope: "files", force: true })).savedDrift!.checkpointId; // holds g/h.txt
  fs.rmSync(at("g"), { recursive: true, force: true });
  fs.writeFileSync(at("g"), "HAND-G"); // a file g now, by hand
  await s.invoke("delete_file", { path: at("g") }); // its undo puts HAND-G back
  const plan = await s.plan({ checkpointId: saved, scope: "both" });
  expect(plan.blocked).toMatch(/g is a file where g\/h\.txt needs a directory/);
  for (const force of [false, true])
    expect(await rejectionOf(s.rollback(saved, { scope: "both", force }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(at("g"))).toBeNull();
  expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true]);
});
