// `forkpoint resolve`: an operator records the outcome of a tool call a crash left running, as resolveToolCall does.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { heldWriteTool, tempDir } from "../fixtures/file-tools.js";
import { startWorker } from "../fixtures/workers.js";
import { runInProcess } from "./in-process.js";

const WORKER = fileURLToPath(new URL("../fixtures/request-move-worker.ts", import.meta.url));

/** A database whose session has a held_write call a SIGKILL left running; its ids. */
async function crashed() {
  const dir = tempDir();
  const db = path.join(dir, "resolve.db");
  const fp = openForkpoint({ path: db, tools: [heldWriteTool()] });
  const s = await fp.createSession({ userId: "ann" });
  await fp.close();
  const file = path.join(dir, "held.txt");
  const w = startWorker(WORKER, [db, s.id, "ann", "invoke", "r-1", file, `${file}.log`]);
  await w.ready;
  const running = new Promise<void>((resolve) => w.child.stdout.on("data", (d: string) => d.includes("running") && resolve()));
  w.child.stdin.write("go\n");
  await running;
  w.child.kill("SIGKILL");
  await w.done;
  const again = openForkpoint({ path: db, tools: [heldWriteTool()], recover: false });
  const [call] = await (await again.getSession(s.id, { userId: "ann" })).toolTrack();
  await again.close();
  expect(call!.status).toBe("running");
  return { db, dir, sessionId: s.id, callId: call!.id };
}

describe("forkpoint resolve", () => {
  it("records a crashed call as succeeded with its JSON result; again, it is refused (exit 1)", async () => {
    const { db, sessionId, callId } = await crashed();
    const at = (args: string[]) => runInProcess(["--db", db, ...args]);
    const recovered = await at(["recover"]);
    expect(recovered.stdout).toContain(`unknown ${callId} held_write`);
    expect(recovered.stdout).toContain("forkpoint resolve <session> <call> --succeeded|--failed");
    const ran = await at(["resolve", sessionId, callId, "--succeeded", "--result", '{"previous":null}', "-u", "ann"]);
    expect([ran.status, ran.stderr]).toEqual([0, ""]);
    expect(ran.stdout).toMatch(/^resolved tc_\S+ held_write: succeeded with \{"previous":null\} \(applied/);
    const again = await at(["resolve", sessionId, callId, "--failed", "-u", "ann"]);
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/^error CALL_NOT_UNKNOWN: /);
  });

  it("refuses (exit 1, CALL_IN_PROGRESS) a call whose process still runs it, and writes nothing", async () => {
    const dir = tempDir();
    const db = path.join(dir, "live.db");
    const fp = openForkpoint({ path: db, tools: [heldWriteTool()] });
    const s = await fp.createSession({ userId: "ann" });
    const file = path.join(dir, "held.txt");
    const w = startWorker(WORKER, [db, s.id, "ann", "invoke", "r-live", file, `${file}.log`]);
    try {
      await w.ready;
      const running = new Promise<void>((resolve) => w.child.stdout.on("data", (d: string) => d.includes("running") && resolve()));
      w.child.stdin.write("go\n");
      await running;
      const [call] = await s.toolTrack();
      const ran = await runInProcess(["--db", db, "resolve", s.id, call!.id, "--succeeded", "-u", "ann"]);
      expect(ran.status).toBe(1);
      expect(ran.stderr).toMatch(/^error CALL_IN_PROGRESS: /);
      expect((await s.toolTrack())[0]!.status).toBe("running");
    } finally {
      w.child.kill("SIGKILL");
      await w.done;
      await fp.close();
    }
  });

  it("--failed with --json prints the completed call; usage errors exit 2", async () => {
    const { db, sessionId, callId } = await crashed();
    const at = (args: string[]) => runInProcess(["--db", db, ...args]);
    for (const args of [
      ["resolve", sessionId, callId, "-u", "ann"],
      ["resolve", sessionId, callId, "--succeeded", "--failed", "-u", "ann"],
      ["resolve", sessionId, callId, "--succeeded", "--result", "{not json", "-u", "ann"],
      ["resolve", sessionId, callId, "--failed", "--result", "1", "-u", "ann"],
      ["resolve", sessionId, callId, "--failed"],
    ])
      expect((await at(args)).status, args.join(" ")).toBe(2);
    const ran = await at(["--json", "resolve", sessionId, callId, "--failed", "--error", "refused by the server", "-u", "ann"]);
    expect(ran.status, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({
      id: callId,
      status: "failed",
      applied: false,
      error: { message: "refused by the server" },
    });
    expect((await at(["resolve", sessionId, "tc_nope", "--failed", "-u", "ann"])).stderr).toMatch(/^error NOT_FOUND/);
    expect(fs.existsSync(db)).toBe(true);
  });
});
