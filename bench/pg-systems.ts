// The two systems the PostgreSQL part compares, behind one shape the chat (pg-chat.ts) and the many writers
// (pg-writers.ts) drive: forkpoint (`openForkpoint({ postgres })`, one session per conversation, `s.turn([u, a])`)
// and LangGraph's PostgresSaver (one thread per conversation, one `put()` with the whole message list per turn).
import type { RunnableConfig } from "@langchain/core/runnables";
import type { PgSystem } from "./plan.js";
import type { Msg } from "./lg-checkpoint.js";
import { contentOf, type ContentKind } from "./util.js";

export type { PgSystem };

/** One conversation: a forkpoint session or a LangGraph thread. */
export interface PgConversation {
  id: string;
  userId: string;
  /** Turn i: a user and an assistant message and a checkpoint, in one write transaction. */
  turn(i: number): Promise<void>;
  /** Reads the latest checkpoint with its whole history; throws unless it holds `messages` messages. */
  readLatest(messages: number): Promise<void>;
}

export interface PgHandle {
  /** Resolves once the system's schema is in place (forkpoint migrates in the background from the open). */
  ready(): Promise<void>;
  /** A new conversation for user `userId`. */
  start(userId: string, title: string): Promise<PgConversation>;
  /** Reads a conversation written by any process back through the system's own API: its message count. */
  messagesOf(c: { id: string; userId: string }): Promise<number>;
  close(): Promise<void>;
}

const messagesOf = (kind: ContentKind | undefined) => {
  const text = contentOf(kind);
  return (i: number): Msg[] => [
    { role: "user", content: text(i, "user") },
    { role: "assistant", content: text(i, "assistant") },
  ];
};

// Loose local views of forkpoint's API (as in forkpoint.ts), so this file runs against whatever the engine exports.
interface Session {
  id: string;
  turn(m: unknown, cp: { name: string }): Promise<{ checkpoint: { id: string } }>;
  restore(id: string): Promise<{ history: unknown[] }>;
  history(): Promise<unknown[]>;
}
interface Fp {
  listCheckpoints(o: { userId: string; limit: number }): Promise<unknown>;
  createSession(o: { userId: string; title: string }): Promise<Session>;
  getSession(id: string, o: { userId: string }): Promise<Session>;
  close(): Promise<void>;
}

async function openForkpointOn(url: string, kind?: ContentKind): Promise<PgHandle> {
  const turnMessages = messagesOf(kind);
  const { openForkpoint } = (await import("../src/index.js")) as unknown as { openForkpoint(o: { postgres: string }): Fp };
  const fp = openForkpoint({ postgres: url });
  return {
    // Any call waits for the migration; a listing of a user with nothing writes nothing.
    ready: async () => void (await fp.listCheckpoints({ userId: "bench-ready", limit: 1 })),
    async start(userId, title) {
      const s = await fp.createSession({ userId, title });
      let latest: string | undefined;
      return {
        id: s.id,
        userId,
        async turn(i) {
          latest = (await s.turn(turnMessages(i), { name: "turn-" + i })).checkpoint.id;
        },
        async readLatest(messages) {
          const r = await s.restore(latest!);
          if (r.history.length !== messages) throw new Error(`restore returned ${r.history.length} messages, expected ${messages}`);
        },
      };
    },
    async messagesOf(c) {
      return (await (await fp.getSession(c.id, { userId: c.userId })).history()).length;
    },
    close: () => fp.close(),
  };
}

async function openPostgresSaverOn(url: string, kind?: ContentKind): Promise<PgHandle> {
  const turnMessages = messagesOf(kind);
  // Imported here, not at the top: a forkpoint process must not load LangChain's checkpoint library (40 MB of heap
  // allocated at import, which its first collections would then copy during the timed turns).
  const { makeCheckpoint, NEW_VERSIONS } = await import("./lg-checkpoint.js");
  const { PostgresSaver } = await import("@langchain/langgraph-checkpoint-postgres");
  const saver = PostgresSaver.fromConnString(url);
  await saver.setup(); // creates its tables the first time (the parent has a first process do it alone)
  const latestOf = async (threadId: string) => {
    const t = await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: "" } });
    return (t?.checkpoint.channel_values.messages as Msg[] | undefined)?.length ?? 0;
  };
  return {
    ready: async () => undefined,
    async start(userId, title) {
      const thread: RunnableConfig = { configurable: { thread_id: `${userId}/${title}`, checkpoint_ns: "" } };
      let config = thread;
      let messages: Msg[] = [];
      let step = 0;
      return {
        id: thread.configurable!.thread_id as string,
        userId,
        async turn(i) {
          // The add-messages reducer yields a new list each step; the saver serializes all of it.
          messages = messages.concat(turnMessages(i));
          config = await saver.put(config, makeCheckpoint(step, messages), { source: "loop", step, parents: {} }, NEW_VERSIONS(step));
          step++;
        },
        async readLatest(expected) {
          const got = await latestOf(thread.configurable!.thread_id as string);
          if (got !== expected) throw new Error(`getTuple returned ${got} messages, expected ${expected}`);
        },
      };
    },
    messagesOf: (c) => latestOf(c.id),
    close: () => saver.end(),
  };
}

/** `kind`: the message text (`content`'s filler by default; `wordsContent` for the database size with distinct text). */
export function openPgSystem(system: PgSystem, url: string, kind?: ContentKind): Promise<PgHandle> {
  return system === "pg" ? openForkpointOn(url, kind) : openPostgresSaverOn(url, kind);
}
