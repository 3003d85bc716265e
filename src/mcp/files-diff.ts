// What changed in the workspace's files, for `diff` and `plan_rollback`: computed in a worker thread with a deadline.
// `plan_rollback` asks for the file lists only (`{ patch: false }`), `diff` for a patch bounded in length; still, a
// unified diff is computed synchronously and grows with a long file's length times its changed lines (seconds for a
// file of thousands of lines rewritten): on the server's own thread it would stop every other client, and Ctrl-C,
// until done. In a worker the server keeps answering, and a comparison that runs past the deadline is stopped (the
// worker ended) and answered with DIFF_TIMEOUT.
import { Worker } from "node:worker_threads";
import ms from "ms";
import { ForkpointError, type DiffFilesOptions, type FilesDiff, type SessionHandle } from "../index.js";

/** A comparison: from a checkpoint to another, or to `"disk"` (the directory now). */
export interface FilesPair {
  from: string;
  to: string;
}

/** One comparison's changes, its patch cut to the length asked for. */
export interface FileChanges {
  added: string[];
  modified: string[];
  deleted: string[];
  patch: string;
  patchTruncated: boolean;
  skipped: { path: string; reason: string }[];
}

export interface FilesDiffer {
  /** Each pair's changes, in order; patches cut to `patchChars` characters (0: none kept). */
  changes(session: SessionHandle, pairs: readonly FilesPair[], patchChars: number): Promise<FileChanges[]>;
  /** Stops the worker (a comparison under way is abandoned). */
  close(): Promise<void>;
}

/** The database a worker opens: the server's own. */
export type WorkerStore = { path: string } | { postgres: string; preparedStatements?: false };

/** @internal what the server's thread posts to the worker */
export interface DiffRequest {
  id: number;
  sessionId: string;
  userId: string;
  pairs: FilesPair[];
  patchChars: number;
}

/** @internal what the worker posts back */
export type DiffReply =
  { id: number; ok: true; changes: FileChanges[] } | { id: number; ok: false; error: { code: string | undefined; message: string } };

/** What `diffFiles` is asked for: the file lists only (`patchChars` 0), or a patch cut at `patchChars` characters. */
export const diffOptions = (patchChars: number): DiffFilesOptions => (patchChars > 0 ? { maxPatchChars: patchChars } : { patch: false });

/** `d` as the tools answer it. */
export const changesOf = (d: FilesDiff): FileChanges => ({
  added: d.added,
  modified: d.modified,
  deleted: d.deleted,
  patch: d.patch,
  patchTruncated: d.patchTruncated === true,
  skipped: d.skipped ?? [],
});

/** On this thread: for a database only this thread can open (`:memory:`). */
export const inThreadDiffer: FilesDiffer = {
  async changes(s, pairs, patchChars) {
    const out: FileChanges[] = [];
    for (const { from, to } of pairs) out.push(changesOf(await s.diffFiles(from, to, diffOptions(patchChars))));
    return out;
  },
  close: async () => undefined,
};

export interface WorkerDifferOptions {
  store: WorkerStore;
  /** How long one call's comparisons may take, the worker's start included. */
  timeoutMs: number;
  /** A worker with nothing to do for this long is ended (its handle and file watcher with it); default 60 s. */
  idleMs?: number;
}

/** The worker's module, beside this one: .ts when run from the sources (through tsx), .js when built. */
const workerUrl = () => new URL(`./files-worker${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url);

interface Pending {
  request: DiffRequest;
  resolve: (changes: FileChanges[]) => void;
  reject: (error: unknown) => void;
}

/** Comparisons run one at a time in a worker thread, started when first needed and ended past the deadline. */
export function workerDiffer(o: WorkerDifferOptions): FilesDiffer {
  const idleMs = o.idleMs ?? 60_000;
  const queue: Pending[] = [];
  let worker: Worker | null = null;
  let running: Pending | null = null;
  let deadline: NodeJS.Timeout | null = null;
  let idle: NodeJS.Timeout | null = null;
  let nextId = 1;
  let closed = false;

  /** Ends the worker: asked to close its handle when idle, ended at once when busy (or when it does not close). */
  const stopWorker = (busy: boolean): Promise<void> => {
    const w = worker;
    worker = null;
    if (idle) clearTimeout(idle);
    idle = null;
    if (!w) return Promise.resolve();
    if (busy) return w.terminate().then(() => undefined);
    const exited = new Promise<void>((resolve) => w.once("exit", () => resolve()));
    const forced = setTimeout(() => void w.terminate(), 5_000).unref();
    w.postMessage("close");
    return exited.finally(() => clearTimeout(forced));
  };

  const settle = (outcome: { changes: FileChanges[] } | { error: unknown }) => {
    const job = running;
    if (!job) return;
    running = null;
    if (deadline) clearTimeout(deadline);
    deadline = null;
    if ("changes" in outcome) job.resolve(outcome.changes);
    else job.reject(outcome.error);
    next();
  };

  const start = (): Worker => {
    const w = new Worker(workerUrl(), { workerData: o.store });
    w.unref(); // never what keeps the process alive
    w.on("message", (reply: DiffReply) => {
      if (w !== worker || reply.id !== running?.request.id) return;
      if (reply.ok) settle({ changes: reply.changes });
      else settle({ error: new ForkpointError(reply.error.code ?? "INTERNAL", reply.error.message) });
    });
    const died = (error: unknown) => {
      if (w !== worker) return;
      worker = null;
      settle({ error });
    };
    w.on("error", died);
    w.on("exit", (code) => died(new Error(`the file comparison's worker stopped (exit code ${code})`)));
    return w;
  };

  function next(): void {
    if (running || closed) return;
    const job = queue.shift();
    if (!job) {
      if (worker && !idle) idle = setTimeout(() => void stopWorker(false), idleMs).unref();
      return;
    }
    if (idle) clearTimeout(idle);
    idle = null;
    running = job;
    worker ??= start();
    deadline = setTimeout(() => {
      void stopWorker(true);
      settle({
        error: new ForkpointError(
          "DIFF_TIMEOUT",
          `comparing the files took longer than ${ms(o.timeoutMs, { long: true })}, so it was stopped (a diff of a long text ` +
            `file with many changed lines is slow to compute)`,
        ),
      });
    }, o.timeoutMs);
    worker.postMessage(job.request);
  }

  return {
    changes(session, pairs, patchChars) {
      if (closed) return Promise.reject(new Error("the server is closing"));
      return new Promise<FileChanges[]>((resolve, reject) => {
        const request = { id: nextId++, sessionId: session.id, userId: session.userId, pairs: [...pairs], patchChars };
        queue.push({ request, resolve, reject });
        next();
      });
    },
    async close() {
      closed = true;
      for (const job of queue.splice(0)) job.reject(new Error("the server is closing"));
      if (deadline) clearTimeout(deadline);
      const job = running;
      running = null;
      job?.reject(new Error("the server is closing"));
      await stopWorker(job !== null);
    },
  };
}
