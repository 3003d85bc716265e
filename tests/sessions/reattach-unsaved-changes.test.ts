// Attaching a workspace under other options or another directory refuses while its files hold a hand edit no
// checkpoint keeps (forkpoint would stop seeing it, and a rewind's undo would write over it); a checkpoint first lets it.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

const ELSEWHERE: [string, (ws: string) => [string, { exclude?: string[] }]][] = [
  ["with a pattern added", (ws) => [ws, { exclude: ["*.log", "tmp/", "*.bak"] }]],
  ["excluding the edited file", (ws) => [ws, { exclude: ["*.log", "tmp/", "a.txt"] }]],
  ["as another directory", () => [tempDir("forkpoint-unsaved-other-"), { exclude: ["*.log", "tmp/"] }]],
];

describe.each(ELSEWHERE)("attached again %s", (_, next) => {
  async function handEditAfterCall() {
    const ws = tempDir("forkpoint-unsaved-");
    const a = path.join(ws, "a.txt");
    fs.writeFileSync(a, "A");
    const { fp } = dbs.open({ tools: [writeFileTool()] });
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws, { exclude: ["*.log", "tmp/"] });
    await s.append({ role: "user", content: "go" });
    const c0 = await s.checkpoint({ name: "c0" });
    await s.invoke("write_file", { path: a, text: "TOOL" });
    fs.writeFileSync(a, "HAND after call");
    return { s, c0, a, ws };
  }

  it("refuses while the hand edit is in no checkpoint, and the rewind cannot then lose it", async () => {
    const { s, c0, a, ws } = await handEditAfterCall();
    const [dir, options] = next(ws);
    const refused = await rejectionOf(s.attachWorkspace(dir, options));
    expect(refused.code).toBe("WORKSPACE_DRIFT");
    expect(refused.message).toContain("a.txt");
    expect((await rejectionOf(s.rollback(c0.id))).code).toBe("WORKSPACE_DRIFT");
    expect(readOrNull(a)).toBe("HAND after call");
  });

  it("attaches once a checkpoint keeps the hand edit", async () => {
    const { s, a, ws } = await handEditAfterCall();
    const kept = await s.checkpoint({ name: "kept" });
    const [dir, options] = next(ws);
    await s.attachWorkspace(dir, options);
    // Back under the rules it was captured with, the kept checkpoint restores the hand edit.
    await s.attachWorkspace(ws, { exclude: ["tmp/", "*.log"] });
    fs.writeFileSync(a, "A");
    await s.rollback(kept.id, { scope: "files", force: true });
    expect(readOrNull(a)).toBe("HAND after call");
  });
});

it("a hand deletion keeps no content: attaching under other options goes on", async () => {
  const ws = tempDir("forkpoint-unsaved-deleted-");
  fs.writeFileSync(path.join(ws, "a.txt"), "A");
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  fs.rmSync(path.join(ws, "a.txt"));
  expect((await s.attachWorkspace(ws, { exclude: ["*.log"] })).files).toBe(0);
});
