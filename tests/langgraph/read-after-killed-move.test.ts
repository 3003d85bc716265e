// A LangGraph read of a thread whose session's rollback was killed midway finishes that move first: the next run goes
// on from where the rollback ends, rather than being refused SESSION_MOVED once the move is finished under it.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { afterEach, describe, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { expireLeases, openForkpoint, sqlOn } from "../fixtures/backend.js";
import { nodeArgs } from "../fixtures/compiled.js";
import { readLog, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { say, texts } from "./helpers.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const USER = "dana";
const N = 8;
const config = { configurable: { thread_id: "t" } };
const opened: Forkpoint[] = [];

afterEach(async () => {
  for (const fp of opened.splice(0)) await fp.close().catch(() => undefined);
});

/** A saver and an echo graph whose node writes N files through the thread's session when asked to "write". */
function open(dbPath: string, logFile: string, files: string[]) {
  const fp = openForkpoint({ path: dbPath, tools: [writeFileTool({ logFile })], recover: false });
  opened.push(fp);
  const saver = new ForkpointSaver(fp, { userId: USER });
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("bot", async (state) => {
      const q = String(state.messages.at(-1)!.content);
      if (q === "write") {
        const s = await saver.sessionFor("t", { userId: USER });
        for (const file of files) await s.invoke("write_file", { path: file, text: "new" });
      }
      return { messages: [new AIMessage(`echo: ${q}`)] };
    })
    .addEdge(START, "bot")
    .addEdge("bot", END)
    .compile({ checkpointer: saver });
  return { fp, saver, graph };
}

const undos = (logFile: string) => readLog(logFile).filter((c) => c.op === "undo").length;

describe("a LangGraph thread whose rollback was killed midway", () => {
  it("the next invoke finishes the rollback and goes on from it", async () => {
    const dir = tempDir("forkpoint-lg-killed-move-");
    const dbPath = path.join(dir, "forkpoint.db");
    const logFile = path.join(dir, "calls.jsonl");
    const files = Array.from({ length: N }, (_, i) => path.join(dir, `f${i}.txt`));
    const first = open(dbPath, logFile, files);
    await first.graph.invoke(say("hi"), config);
    const s0 = await first.saver.sessionFor("t", { userId: USER });
    const afterHi = await s0.checkpoint({ name: "after hi" });
    await first.graph.invoke(say("write"), config);
    await first.fp.close();
    opened.splice(0);

    // A child rolls the session back to "after hi", each undo slow; it is killed in the third (which never returns).
    const script = path.join(repoRoot, "tests/fixtures/crash-rollback.ts");
    const args = [dbPath, s0.id, USER, "rollback", afterHi.id, logFile, "60", "3"];
    const child = spawn(process.execPath, [...nodeArgs(script), ...args], { cwd: repoRoot, stdio: "ignore" });
    const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
    for (let i = 0; undos(logFile) < 3; i++) {
      if (child.exitCode !== null || i > 12_000) throw new Error("the child did not undo 3 calls");
      await new Promise((r) => setTimeout(r, 5));
    }
    child.kill("SIGKILL");
    await exited;
    await expireLeases(dbPath);
    expect(await sqlOn<{ status: string }>(dbPath, "SELECT status FROM moves")).toEqual([{ status: "running" }]);

    const { saver, graph } = open(dbPath, logFile, files);
    expect(texts((await graph.getState(config)).values.messages)).toEqual(["human:hi", "ai:echo: hi"]);
    const out = await graph.invoke(say("next"), config);
    expect(texts(out.messages)).toEqual(["human:hi", "ai:echo: hi", "human:next", "ai:echo: next"]);
    expect(files.filter((f) => fs.existsSync(f))).toEqual([]);
    expect(undos(logFile)).toBe(N);
    const s = await saver.sessionFor("t", { userId: USER });
    expect((await s.history()).map((m) => m.content)).toEqual(["hi", "echo: hi", "next", "echo: next"]);
    expect(await sqlOn<{ status: string }>(dbPath, "SELECT status FROM moves")).toEqual([{ status: "done" }]);
  });
});
