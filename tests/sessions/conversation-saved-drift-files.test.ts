// A forced "conversation" move's `savedDrift.files` names the files it saves because its undos and replays write over
// them, as `plan().drift` does: drift elsewhere, left as it is, is in the checkpoint but not listed (review ws6, d2).
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

it("lists the drift its undo writes over, not a hand edit elsewhere it leaves as it is", async () => {
  const ws = tempDir("forkpoint-saved-drift-files-");
  const at = (rel: string) => path.join(ws, rel);
  const { fp } = dbs.open({ tools: [writeFileTool()] as never[] });
  const s = await fp.createSession({ userId: "u" });
  fs.writeFileSync(at("a.txt"), "v0\n");
  fs.writeFileSync(at("c.txt"), "c0\n");
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  await s.invoke("write_file", { path: at("a.txt"), text: "A1\n" });
  fs.writeFileSync(at("a.txt"), "saved by hand\n");
  fs.writeFileSync(at("c.txt"), "edited by hand\n");

  const plan = await s.plan({ checkpointId: c0.id });
  expect(plan.drift).toEqual(["a.txt"]);
  const moved = await s.rollback(c0.id, { force: true });
  expect(moved.savedDrift?.files).toEqual(plan.drift);
  expect(readOrNull(at("a.txt"))).toBe("v0\n");
  expect(readOrNull(at("c.txt"))).toBe("edited by hand\n");
  const saved = await s.diffFiles(c0.id, moved.savedDrift!.checkpointId);
  expect(saved.patch).toContain("+saved by hand");
  expect(saved.patch).toContain("+edited by hand");
});
