// Drives tests/openai-agents/session-worker.ts: starts it on a session and sends it commands, one JSON line each way.
import { fileURLToPath } from "node:url";
import { startWorker } from "../fixtures/workers.js";

const WORKER = fileURLToPath(new URL("./session-worker.ts", import.meta.url));

export interface SessionWorker {
  /** Sends a command and resolves to its answer. Commands are answered in the order sent. */
  send(command: Record<string, unknown>): Promise<any>;
  /** Ends the worker (its stdin closes) and resolves to its exit code. */
  stop(): Promise<number | null>;
}

export async function sessionWorker(path: string, sessionId: string, userId: string): Promise<SessionWorker> {
  const w = startWorker(WORKER, [path, sessionId, userId]);
  await w.ready;
  const waiting: ((line: string) => void)[] = [];
  let buffer = "";
  let seenReady = false;
  w.child.stdout.on("data", (chunk: string) => {
    buffer += chunk;
    let at: number;
    while ((at = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      if (!seenReady && line === "ready") {
        seenReady = true;
        continue;
      }
      waiting.shift()?.(line);
    }
  });
  const exited = w.done.then((run) => {
    for (const reject of waiting.splice(0)) reject(JSON.stringify({ ok: false, code: "EXITED", message: run.stderr }));
    return run;
  });
  return {
    send(command) {
      return new Promise((resolve) => {
        waiting.push((line) => resolve(JSON.parse(line)));
        w.child.stdin.write(JSON.stringify(command) + "\n");
      });
    },
    async stop() {
      w.child.stdin.end();
      return (await exited).code;
    },
  };
}
