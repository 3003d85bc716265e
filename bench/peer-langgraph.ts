// Peer: LangGraph's SqliteSaver doing the chat the LangGraph way (whole message list in every checkpoint). The same
// puts drive forkpoint's own LangGraph saver (bench/saver-forkpoint.ts), so the two savers are compared like for like.
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { RunnableConfig } from "@langchain/core/runnables";
import { join } from "node:path";
import { makeCheckpoint, NEW_VERSIONS, type Msg } from "./lg-checkpoint.js";
import { content, dbBytes, emptyChat, firstLastMedians, peakRssMB, now, tempDir, timeMedian, type ChatFigures } from "./util.js";

/** A saver under test: the file it writes, a way to fold its WAL into that file, and how to close it. */
export interface OpenedSaver {
  saver: BaseCheckpointSaver;
  file: string;
  flush(): void;
  close(): Promise<void>;
}

export async function runPeerChat(n: number, reps = 5): Promise<ChatFigures> {
  return runSaverChat(n, reps, "peer", async (dir) => {
    const file = join(dir, "langgraph.db");
    const saver = SqliteSaver.fromConnString(file);
    return { saver, file, flush: () => void saver.db.pragma("wal_checkpoint(TRUNCATE)"), close: async () => void saver.db.close() };
  });
}

/** The chat through a LangGraph checkpointer: one put per turn with the whole list, as the Pregel loop does. */
export async function runSaverChat(
  n: number,
  reps: number,
  name: string,
  open: (dir: string) => Promise<OpenedSaver>,
): Promise<ChatFigures> {
  const fig = emptyChat(n);
  const { dir, cleanup } = tempDir(name);
  const { saver, file, flush, close } = await open(dir);
  try {
    const thread: RunnableConfig = { configurable: { thread_id: "thread-1", checkpoint_ns: "" } };
    let config: RunnableConfig = thread;
    let messages: Msg[] = [];
    const configs: RunnableConfig[] = [];
    const turnMs: number[] = [];
    const t0 = now();
    for (let i = 0; i < n; i++) {
      const ts = now();
      // The add-messages reducer yields a new list each step; the saver serializes all of it.
      messages = messages.concat([
        { role: "user", content: content(i, "user") },
        { role: "assistant", content: content(i, "assistant") },
      ]);
      config = await saver.put(config, makeCheckpoint(i, messages), { source: "loop", step: i, parents: {} }, NEW_VERSIONS(i));
      configs.push(config);
      turnMs.push(now() - ts);
    }
    fig.totalMs = now() - t0;
    Object.assign(fig, firstLastMedians(turnMs));
    fig.turnsRssMB = peakRssMB();

    flush();
    fig.dbBytes = dbBytes(file);

    // Latest checkpoint with its history (the history lives inside the checkpoint).
    fig.readLatestMs = await timeMedian(reps, async () => {
      const t = await saver.getTuple(thread);
      if (!t || (t.checkpoint.channel_values.messages as Msg[]).length !== 2 * n) throw new Error(`${name}: bad latest`);
    });
    fig.notes.push(`${name} history = the latest checkpoint's messages channel (same as read latest)`);

    fig.list10Ms = await timeMedian(reps, async () => {
      let count = 0;
      for await (const _ of saver.list(thread, { limit: 10 })) count++;
      if (count !== Math.min(10, n)) throw new Error(`${name}: bad list`);
    });

    // Rollback to the middle = LangGraph's fork: read the middle checkpoint, put a new one from it.
    const mid = configs[Math.floor(n / 2)]!;
    let step = n;
    fig.rollbackMs = await timeMedian(reps, async () => {
      const t = await saver.getTuple(mid);
      if (!t) throw new Error(`${name}: no middle checkpoint`);
      const msgs = t.checkpoint.channel_values.messages as Msg[];
      await saver.put(mid, makeCheckpoint(step, msgs), { source: "update", step, parents: {} }, NEW_VERSIONS(step++));
    });

    // Edit = fork just before the middle user message with a replaced message (updateState on that checkpoint).
    const before = configs[Math.floor(n / 2) - 1] ?? configs[0]!;
    fig.editMs = await timeMedian(reps, async () => {
      const t = await saver.getTuple(before);
      if (!t) throw new Error(`${name}: no checkpoint before the middle`);
      const msgs = (t.checkpoint.channel_values.messages as Msg[]).concat([{ role: "user", content: content(-1, "user") }]);
      await saver.put(before, makeCheckpoint(step, msgs), { source: "update", step, parents: {} }, NEW_VERSIONS(step++));
    });
    return fig;
  } finally {
    await close();
    cleanup();
  }
}
