// Runs SQLite's WAL checkpoints (copying the log into the database file, with two fsyncs) on a worker thread when
// a database is opened with `walWorker`: commits then rarely stall for them (otherwise a few ms every hundred or
// so turns).
import type Database from "better-sqlite3";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { Worker } from "node:worker_threads";

/**
 * The worker: its own connection to the same file, a PASSIVE checkpoint per request, answered with the frames it
 * copied. PASSIVE never waits for locks and never blocks the writer; a request that finds nothing to copy costs a
 * few microseconds. SQLite reports frames backfilled so far in the current WAL, so the copy is the difference from
 * the last answer, unless the WAL restarted (its frame count went down). Plain CommonJS run with `eval`, so the same
 * code works from src/ (tsx, vitest) and from dist/.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: 0, fileMustExist: true });
let lastLog = 0, lastDone = 0;
parentPort.on("message", (message) => {
  if (message === "close") {
    db.close();
    parentPort.close();
    return;
  }
  let copied = 0;
  try {
    const { log, checkpointed } = db.pragma("wal_checkpoint(PASSIVE)")[0];
    copied = log < lastLog ? checkpointed : Math.max(0, checkpointed - lastDone);
    lastLog = log;
    lastDone = checkpointed;
  } catch {}
  parentPort.postMessage(copied);
});
`;

/** SQLite's own automatic checkpoint threshold (pages), used whenever no worker is running. */
const DEFAULT_AUTOCHECKPOINT = 1000;
/** While the worker runs, the writer still checkpoints itself past this many pages: the worker fell behind or died. */
const FALLBACK_AUTOCHECKPOINT = 8000;

const driverPath = createRequire(import.meta.url).resolve("better-sqlite3");

/**
 * Checkpointers whose worker runs, closed when the process is about to end by itself with a database left open: a
 * worker torn down mid-checkpoint at exit can abort the process from native code.
 */
const running = new Set<WalCheckpointer>();
let hooked = false;
const closeLeftOpen = () => {
  for (const checkpointer of running) void checkpointer.close();
};

export interface WalCheckpointerOptions {
  /** Write transactions between two checkpoint requests. */
  everyWrites: number;
  /** Write transactions (on this handle) before the worker starts: short-lived processes never pay for it. */
  startAfterWrites: number;
  /** Told once if the worker fails or stops by itself (not when closed): a server wants that in its logs. */
  onFailure?: (message: string, cause: unknown) => void;
}

/** Owned by the store: told of each committed write, asks the worker to checkpoint every `everyWrites` of them. */
export class WalCheckpointer {
  readonly #db: Database.Database;
  /** Absolute, fixed at open: the worker starts later, possibly after the process changed its directory. */
  readonly #path: string;
  readonly #options: WalCheckpointerOptions;
  #worker: Worker | undefined;
  #writes = 0;
  #stopped = false;
  /** WAL frames the worker has copied into the database file so far (what tests observe). */
  framesCopied = 0;

  constructor(db: Database.Database, options: WalCheckpointerOptions) {
    this.#db = db;
    this.#path = resolve(db.name);
    this.#options = options;
  }

  /** True while a worker is started and has not stopped. */
  get running(): boolean {
    return this.#worker !== undefined;
  }

  /** Called after every committed write transaction. Never throws: the write is stored whatever happens here. */
  committed(): void {
    if (this.#stopped) return;
    const n = ++this.#writes;
    if (n < this.#options.startAfterWrites || n % this.#options.everyWrites !== 0) return;
    try {
      (this.#worker ??= this.#start()).postMessage("checkpoint");
    } catch (error) {
      this.#fallBack(error);
    }
  }

  #start(): Worker {
    // No execArgv: the worker is plain CommonJS and needs none of the parent's loaders (tsx, test runners).
    const worker = new Worker(WORKER_SOURCE, { eval: true, execArgv: [], workerData: { path: this.#path, driver: driverPath } });
    worker.on("message", (copied: number) => (this.framesCopied += copied));
    worker.on("error", (error) => this.#fallBack(error));
    worker.on("exit", (code) => this.#fallBack(new Error(`the WAL checkpoint worker exited (code ${code})`)));
    // The worker must never keep alive a process that forgot to close its database. After the listeners:
    // adding a "message" listener refs the worker's port again.
    worker.unref();
    this.#db.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT}`);
    running.add(this);
    if (!hooked) process.on("beforeExit", closeLeftOpen);
    hooked = true;
    return worker;
  }

  /** Without a worker the writer checkpoints itself again, as SQLite does by default. */
  #fallBack(cause: unknown): void {
    // "exit" follows "error", and closing stops it on purpose: only the first unexpected stop is news.
    if (!this.#stopped)
      this.#options.onFailure?.("forkpoint: the WAL checkpoint worker stopped; the writer checkpoints itself again", cause);
    this.#stopped = true;
    this.#worker = undefined;
    running.delete(this);
    if (this.#db.open) this.#db.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT}`);
  }

  /** Stops the worker after closing its connection; undefined when none is running. Never rejects. */
  close(): Promise<void> | undefined {
    const worker = this.#worker;
    this.#stopped = true;
    running.delete(this);
    if (!worker) return undefined;
    // "exit" follows "error" too: waiting for it alone (not `events.once`, which rejects on "error") never rejects.
    const exited = new Promise<void>((done) => worker.once("exit", () => done()));
    // Referenced again while closing: an awaited close() must not let the process end under it.
    worker.ref();
    worker.postMessage("close");
    return exited;
  }
}
