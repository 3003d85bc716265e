// A session whose workspace directory is gone, or a file now: every call that reads its files is refused with a typed
// `WORKSPACE_MISSING`, nothing written; once the directory is back, the session goes on.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { ForkpointError } from "../../src/index.js";
import { tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

const codeOf = (call: () => Promise<unknown>) =>
  call().then(
    () => "done",
    (e: unknown) => (e instanceof ForkpointError ? e.code : `untyped: ${String(e)}`),
  );

it("checkpoint, diffFiles and files moves refuse WORKSPACE_MISSING while the directory is gone or a file", async () => {
  const { fp } = dbs.open();
  const ws = path.join(tempDir("forkpoint-ws-missing-"), "ws");
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, "a.txt"), "1");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const cp = await s.checkpoint({ name: "one" });
  await s.append({ role: "user", content: "x" });
  const before = { branch: (await s.info()).currentBranchId, checkpoints: (await s.listCheckpoints()).items.length };
  const calls = {
    checkpoint: () => s.checkpoint({ name: "two" }),
    diffFiles: () => s.diffFiles(cp.id, "disk"),
    both: () => s.rollback(cp.id, { scope: "both" }),
    files: () => s.rollback(cp.id, { scope: "files" }),
  };
  for (const replaced of [false, true]) {
    fs.rmSync(ws, { recursive: true, force: true });
    if (replaced) fs.writeFileSync(ws, "now a file");
    for (const [name, call] of Object.entries(calls)) expect([name, await codeOf(call)]).toEqual([name, "WORKSPACE_MISSING"]);
    expect({ branch: (await s.info()).currentBranchId, checkpoints: (await s.listCheckpoints()).items.length }).toEqual(before);
    fs.rmSync(ws, { force: true });
  }
  // Back, empty: its file's loss is drift, which a forced restore saves before it puts the file back.
  fs.mkdirSync(ws);
  expect(await codeOf(() => s.rollback(cp.id, { scope: "files" }))).toBe("WORKSPACE_DRIFT");
  await s.rollback(cp.id, { scope: "files", force: true });
  expect(fs.readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("1");
  expect(await fp.verify()).toMatchObject({ ok: true });
});
