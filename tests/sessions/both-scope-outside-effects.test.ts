// A scope "both" move counts a call as held by the files it restores only when its run changed workspace files: a call
// whose effect lies outside the workspace (another directory) or in a path it excludes (build/) is replayed through its
// tool on switching back, so its effect is there again when the track says it is applied.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { appendLineTool, readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

describe('scope "both" and calls whose effect lies outside the workspace', () => {
  it("switching back replays a write outside the workspace made before the target's snapshot", async () => {
    const { fp } = dbs.open({ tools: [appendLineTool(), writeFileTool()] });
    const ws = tempDir();
    const outside = path.join(tempDir(), "outside.txt");
    const log = path.join(ws, "log.txt");
    fs.writeFileSync(log, "");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const start = await s.checkpoint({ name: "start" });
    await s.invoke("write_file", { path: outside, text: "outside" });
    await s.invoke("append_line", { path: log, line: "a" });
    await s.checkpoint({ name: "after" }); // captures log.txt; outside.txt is not the workspace's
    const head = (await s.info()).currentBranchId;

    await s.rollback(start.id, { scope: "both" });
    expect(readOrNull(outside)).toBe(null);
    expect(readOrNull(log)).toBe("");

    const back = await s.switchBranch(head, { scope: "both" });
    expect(readOrNull(log)).toBe("a\n");
    // The track says the write is applied again: its effect must be there.
    expect((await s.toolTrack()).map((t) => [t.tool, t.applied])).toEqual([
      ["write_file", true],
      ["append_line", true],
    ]);
    expect(back.replayed.map((t) => t.tool)).toEqual(["write_file"]);
    expect(readOrNull(outside)).toBe("outside");
  });

  it("switching back replays a write to a path the workspace excludes, made before the target's snapshot", async () => {
    const { fp } = dbs.open({ tools: [appendLineTool(), writeFileTool()] });
    const ws = tempDir();
    fs.mkdirSync(path.join(ws, "build"));
    const built = path.join(ws, "build", "out.js");
    const log = path.join(ws, "log.txt");
    fs.writeFileSync(log, "");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws, { exclude: ["build/"] });
    const start = await s.checkpoint({ name: "start" });
    await s.invoke("write_file", { path: built, text: "compiled" });
    await s.invoke("append_line", { path: log, line: "a" });
    await s.checkpoint({ name: "after" }); // captures log.txt, not build/
    const head = (await s.info()).currentBranchId;

    await s.rollback(start.id, { scope: "both" });
    expect(readOrNull(built)).toBe(null);
    const back = await s.switchBranch(head, { scope: "both" });
    expect(readOrNull(log)).toBe("a\n");
    expect(back.replayed.map((t) => t.tool)).toEqual(["write_file"]);
    expect(readOrNull(built)).toBe("compiled");
  });

  it("leaves applied a target's call outside the workspace made after the snapshot: neither undone nor replayed", async () => {
    const { fp } = dbs.open({ tools: [appendLineTool(), writeFileTool()] });
    const ws = tempDir();
    const outside = path.join(tempDir(), "outside.txt");
    const log = path.join(ws, "log.txt");
    fs.writeFileSync(log, "");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    await s.invoke("append_line", { path: log, line: "a" });
    await s.checkpoint({ name: "after" }); // the snapshot the edit restores
    await s.invoke("write_file", { path: outside, text: "outside" });
    const [question] = await s.append([{ role: "user", content: "q" }]);
    await s.invoke("append_line", { path: log, line: "b" });

    const edited = await s.edit(question!.id, { content: "q, edited" }, { scope: "both" });
    expect(edited.undone.map((t) => [t.tool, t.args])).toEqual([["append_line", { path: log, line: "b" }]]);
    expect(edited.replayed).toEqual([]);
    expect(readOrNull(log)).toBe("a\n");
    expect(readOrNull(outside)).toBe("outside");
    expect((await s.toolTrack()).map((t) => [t.tool, t.applied])).toEqual([
      ["append_line", true],
      ["write_file", true],
    ]);
  });
});
