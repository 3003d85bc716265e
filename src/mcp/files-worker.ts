// The worker thread `forkpoint mcp` compares a workspace's files in (files-diff.ts): its own read-only handle on the
// database, so that a long comparison never holds up the server's thread, and can be stopped.
import { parentPort, workerData } from "node:worker_threads";
import { openForkpoint, type Forkpoint, type SessionHandle } from "../index.js";
import { changesOf, diffOptions, type DiffReply, type DiffRequest, type WorkerStore } from "./files-diff.js";

const store = workerData as WorkerStore;
// Read-only, and no recovery of interrupted moves: that is the server's own handle's business.
const fp: Forkpoint = openForkpoint({ ...store, readonly: true, recover: false });
const sessions = new Map<string, SessionHandle>();

async function answer(job: DiffRequest): Promise<DiffReply> {
  try {
    let s = sessions.get(job.sessionId);
    if (!s) sessions.set(job.sessionId, (s = await fp.getSession(job.sessionId, { userId: job.userId })));
    const changes = [];
    for (const { from, to } of job.pairs) changes.push(changesOf(await s.diffFiles(from, to, diffOptions(job.patchChars))));
    return { id: job.id, ok: true, changes };
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    return { id: job.id, ok: false, error: { code: (e as { code?: unknown }).code as string | undefined, message: e.message } };
  }
}

parentPort!.on("message", (message: DiffRequest | "close") => {
  // Asked to stop while idle: the handle closed (its file watcher with it), then the thread ends.
  if (message === "close") void fp.close().finally(() => parentPort!.close());
  else void answer(message).then((reply) => parentPort!.postMessage(reply));
});
