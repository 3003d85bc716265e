// Measures ForkpointSaver serving many users: 200 invokes on threads already 1,000 messages long, one long-lived saver
// for 3 users round-robin (each run's config names its user) against a saver made per user, and a saver per request.
// Run: npx tsx bench/langgraph-users.ts
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { openForkpoint } from "../src/index.js";
import { ForkpointSaver } from "../src/langgraph/index.js";

const USERS = ["alice", "bob", "carol"];
const INVOKES = 200;
const PRELOAD = 1_000;

const graphOf = (saver: ForkpointSaver) =>
  new StateGraph(MessagesAnnotation)
    .addNode("bot", (s) => ({ messages: [new AIMessage(`echo: ${String(s.messages.at(-1)!.content)}`)] }))
    .addEdge(START, "bot")
    .addEdge("bot", END)
    .compile({ checkpointer: saver });

async function run(mode: "shared" | "per-user" | "per-request"): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fp-bench-"));
  const fp = openForkpoint({ path: path.join(dir, "fp.db") });
  try {
    const seed = new ForkpointSaver(fp);
    for (const userId of USERS) {
      const preload = Array.from({ length: PRELOAD }, (_, i) => (i % 2 ? new AIMessage(`a${i}`) : new HumanMessage(`q${i}`)));
      await graphOf(seed).invoke({ messages: preload }, { configurable: { thread_id: "t", userId } });
    }
    const shared = new ForkpointSaver(fp);
    const perUser = new Map(USERS.map((u) => [u, new ForkpointSaver(fp, { userId: u })]));
    const graphs = new Map([...perUser].map(([u, s]) => [u, graphOf(s)]));
    const sharedGraph = graphOf(shared);
    const start = performance.now();
    for (let i = 0; i < INVOKES; i++) {
      const userId = USERS[i % USERS.length]!;
      const input = { messages: [new HumanMessage(`turn ${i}`)] };
      if (mode === "shared") await sharedGraph.invoke(input, { configurable: { thread_id: "t", userId } });
      else if (mode === "per-user") await graphs.get(userId)!.invoke(input, { configurable: { thread_id: "t" } });
      else await graphOf(new ForkpointSaver(fp, { userId })).invoke(input, { configurable: { thread_id: "t" } });
    }
    return (performance.now() - start) / INVOKES;
  } finally {
    await fp.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

for (const mode of ["shared", "per-user", "per-request"] as const) {
  console.log(
    `${mode}: ${(await run(mode)).toFixed(1)} ms per invoke (${INVOKES} invokes, ${USERS.length} users, ${PRELOAD}+ messages each)`,
  );
}
