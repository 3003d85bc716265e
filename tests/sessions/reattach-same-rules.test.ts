// Attaching again with the same exclude rules listed in another order or with repeats is no change of rules: a hand
// edit made after a call stays drift a rewind refuses, and earlier checkpoints stay restorable.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { sameExclude } from "../../src/sessions/workspace/exclude-list.js";

const dbs = tempDatabases();

const RELISTED: [string, string[], string[]][] = [
  ["in another order", ["*.log", "tmp/"], ["tmp/", "*.log"]],
  ["with a pattern repeated", ["*.log"], ["*.log", "*.log"]],
];

describe.each(RELISTED)("attached again with the exclude list %s", (_, first, again) => {
  async function handEditAfterCall() {
    const ws = tempDir("forkpoint-same-rules-");
    const a = path.join(ws, "a.txt");
    fs.writeFileSync(a, "A");
    const { fp } = dbs.open({ tools: [writeFileTool()] });
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws, { exclude: first });
    await s.append({ role: "user", content: "go" });
    const c0 = await s.checkpoint({ name: "c0" });
    await s.invoke("write_file", { path: a, text: "TOOL" });
    fs.writeFileSync(a, "HAND after call");
    await s.attachWorkspace(ws, { exclude: again });
    return { s, c0, a };
  }

  it("a conversation rewind refuses the hand edit", async () => {
    const { s, c0, a } = await handEditAfterCall();
    expect((await s.plan({ checkpointId: c0.id })).drift).toEqual(["a.txt"]);
    expect((await rejectionOf(s.rollback(c0.id))).code).toBe("WORKSPACE_DRIFT");
    expect(readOrNull(a)).toBe("HAND after call");
  });

  it.each(["files", "both"] as const)("a %s rewind to an earlier checkpoint refuses the drift, and forced restores", async (scope) => {
    const { s, c0, a } = await handEditAfterCall();
    expect((await s.plan({ checkpointId: c0.id, scope })).drift).toEqual(["a.txt"]);
    expect((await rejectionOf(s.rollback(c0.id, { scope }))).code).toBe("WORKSPACE_DRIFT");
    const forced = await s.rollback(c0.id, { scope, force: true });
    expect(readOrNull(a)).toBe("A");
    expect(forced.savedDrift?.files).toEqual(["a.txt"]);
  });
});

it("a list stored as given (by earlier versions) is the same rules as its canonical form; re-including order counts", () => {
  expect(sameExclude(JSON.stringify(["tmp/", "*.log", "tmp/"]), JSON.stringify(["*.log", "tmp/"]))).toBe(true);
  expect(sameExclude(JSON.stringify(["*.log", "!keep.log"]), JSON.stringify(["!keep.log", "*.log"]))).toBe(false);
  expect(sameExclude(JSON.stringify(["*.log", "!keep.log", "*.log"]), JSON.stringify(["!keep.log", "*.log"]))).toBe(true);
  expect(sameExclude(JSON.stringify(["*.log"]), JSON.stringify(["*.log", "tmp/"]))).toBe(false);
});
