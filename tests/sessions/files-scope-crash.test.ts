// A files-only move's change to the tool track is journaled with its restore: a process killed at any point of
// back-and-forth files-only rollbacks leaves, after recovery, the files at one version and the track agreeing with it
// (the call the newer snapshot holds is applied exactly when its files are there). Real child processes, real kills.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { appendLineTool } from "../fixtures/file-tools.js";
import { filesUnder, makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint, sqlOn } from "../fixtures/backend.js";
import { nodeArgs } from "../fixtures/compiled.js";

const WORKER = fileURLToPath(new URL("../fixtures/workspace-restore-worker.ts", import.meta.url));
let dir: string;
let ws: string;
let dbFile: string;
let fp: Forkpoint;

const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws, rel), text);
};
const tree = () => filesUnder(ws, dbFile);
const journalOf = async (sessionId: string) =>
  (await sqlOn<{ restoring: string | null }>(dbFile, "SELECT restoring FROM workspaces WHERE session_id = $1", [sessionId]))[0]!.restoring;

beforeEach(() => {
  dir = makeTempDir("forkpoint-files-crash-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  dbFile = path.join(ws, "forkpoint.db");
  fp = openForkpoint({ path: dbFile, tools: [appendLineTool()] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

it("SIGKILL during files-only rollbacks: after recovery the track agrees with the version on disk", async () => {
  // Enough files that a restore takes a while, so some kills land inside one.
  const files = (tag: string) =>
    Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`f/${i % 7}/${i}.txt`, `${tag}${i} `.repeat(400)]));
  const versionA = files("a");
  for (const [rel, text] of Object.entries(versionA)) write(rel, text);
  const s = await fp.createSession({ userId: "alice" });
  await s.attachWorkspace(ws);
  const a = await s.checkpoint({ name: "A" });
  await s.invoke("append_line", { path: path.join(ws, "log"), line: "L1" });
  fs.rmSync(path.join(ws, "f"), { recursive: true });
  const versionB = { ...files("b"), log: "L1\n" };
  for (const [rel, text] of Object.entries(versionB)) if (rel !== "log") write(rel, text);
  const b = await s.checkpoint({ name: "B" });
  await fp.close();

  let interrupted = 0;
  for (let round = 0; round < 6; round++) {
    const child = spawn(process.execPath, [...nodeArgs(WORKER), dbFile, s.id, a.id, b.id], { stdio: ["ignore", "pipe", "inherit"] });
    await new Promise<void>((ready) => child.stdout.once("data", () => ready()));
    // Kill as soon as a restore is journaled (or after a while, wherever the child is then).
    for (let i = 0; i < 400 && (await journalOf(s.id)) === null; i++) await new Promise((r) => setTimeout(r, 1));
    child.kill("SIGKILL");
    await new Promise((done) => child.once("exit", done));
    fp = openForkpoint({ path: dbFile, recover: false, tools: [appendLineTool()] });
    // Through a pooler, a transaction the child sent before it died may still commit after it exited: what recovery
    // finds, not what was journaled at the kill, says whether a restore was left unfinished.
    const report = await fp.recover();
    if (report.workspaces.length > 0) {
      interrupted++;
      expect(report.workspaces).toMatchObject([{ outcome: "completed" }]);
    }
    const onDisk = tree();
    expect([versionA, versionB]).toContainEqual(onDisk);
    const track = await (await fp.getSession(s.id, { userId: "alice" })).toolTrack();
    expect(track.map((t) => t.applied)).toEqual(["log" in onDisk]);
    expect(await journalOf(s.id)).toBeNull();
    await fp.close();
  }
  expect(interrupted).toBeGreaterThan(0);
  fp = openForkpoint({ path: dbFile });
});
