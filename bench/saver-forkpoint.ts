// forkpoint's LangGraph checkpointer (`forkpoint/langgraph`) doing exactly the peer's puts (bench/peer-langgraph.ts).
import Database from "better-sqlite3";
import { join } from "node:path";
import { openForkpoint } from "../src/index.js";
import { ForkpointSaver } from "../src/langgraph/index.js";
import { runSaverChat } from "./peer-langgraph.js";
import type { ChatFigures } from "./util.js";

export async function runForkpointSaverChat(n: number, reps = 5): Promise<ChatFigures> {
  return runSaverChat(n, reps, "fp saver", async (dir) => {
    const file = join(dir, "forkpoint.db");
    const fp = openForkpoint({ path: file });
    return {
      saver: new ForkpointSaver(fp),
      file,
      // As for the engine's own chat: the WAL is folded into the file through a second connection.
      flush: () => {
        const db = new Database(file);
        try {
          db.pragma("wal_checkpoint(TRUNCATE)");
        } finally {
          db.close();
        }
      },
      close: () => fp.close(),
    };
  });
}
