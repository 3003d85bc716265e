// An app that imports only `@langchain/langgraph/prebuilt` (createReactAgent, as LangGraph's quickstart) keeps the
// saver's run guards: LangGraph's main entry sets up the async context they read, and such an app never loads it.
import { fileURLToPath } from "node:url";
import path from "node:path";
import { expect, it } from "vitest";
import { startWorker } from "../fixtures/workers.js";
import { makeTempDir, removeDir } from "../helpers.js";

const worker = fileURLToPath(new URL("../fixtures/prebuilt-only-agent.ts", import.meta.url));

async function run(main: boolean) {
  const dir = makeTempDir("forkpoint-prebuilt-only-");
  try {
    const { done } = startWorker(worker, [path.join(dir, "forkpoint.db"), dir, ...(main ? ["main"] : [])]);
    const out = await done;
    expect(out.code, out.stderr).toBe(0);
    return JSON.parse(out.stdout.trim().split("\n").pop()!) as { travelled: string; disk: string; verified: boolean };
  } finally {
    removeDir(dir);
  }
}

it("time travel under 'exit' refuses its node's call with only the prebuilt entry loaded, as with the main one", async () => {
  const [prebuiltOnly, withMain] = await Promise.all([run(false), run(true)]);
  // The original branch asked for L1 only: X1 never ran there (nor was it undone and replayed onto it).
  expect(prebuiltOnly).toEqual({ travelled: "ok", disk: "L1\n", verified: true });
  expect(prebuiltOnly).toEqual(withMain);
});
