// Which run of a thread's graph made each tool call its nodes journaled through `sessionFor`, in this process. Two
// runs of one thread at once (two resumes, two inputs sent together) both journal their nodes' calls on the session's
// current lineage; a put then tells its own run's calls from the other run's (`stepCalls` in put-plan.ts): it never
// goes on after the other run's, whose results its state does not hold.
// A run is named by LangGraph's `config.control` (a `RunControl` LangGraph makes per invoke, shared by the run's tasks,
// its puts and its subgraphs), with the invoke's stream `writer` when an app shares one control among its invokes; a run whose config has none (an older LangGraph) is not told apart, as before.
import { randomUUID } from "node:crypto";
import type { RunnableConfig } from "@langchain/core/runnables";

/** A run of a thread's graph, as this saver saw it start (its first read of the thread). */
export interface RunMark {
  /** When it started, on the saver's clock (`RunCalls.#tick`). */
  readonly start: number;
  /**
   * Its name across processes: its puts' forkpoint checkpoints carry it (`langgraph.saverRun`), so a later run on a
   * saver's fork (another invoke, a resume) is told from the fork's own run by any saver (`turnedSince`).
   */
  readonly id: string;
  /** The tasks whose writes its reads were served (their results are in its state: their calls are not another run's). */
  readonly held: Set<string>;
  /**
   * The tasks whose wait or failure its reads were served (an `__interrupt__` or `__error__` write), each with when the
   * saver stored that write: the task's calls made before it are the step the run resumes (or goes on after); calls of
   * the task made after it are another run's resuming it beside this one, whenever they were made.
   */
  readonly resumed: Map<string, number>;
  /**
   * The tasks whose resume values its reads were served: the task's calls made before the run started were made under
   * those values by a run that finished without storing the task's result (a node returning no update): LangGraph
   * runs the task again from them, as any saver serves them (at least once), not a run beside this one.
   */
  readonly given: Set<string>;
  /**
   * The branch of the thread's session its first read of the thread's head was served on: a run that started on the
   * branch a move made goes on from the head it read there, not from where the move left the session.
   */
  readOn?: string;
  /** The seq of the stored checkpoint that first read was served (none: a head synthesized from the app's messages). */
  readSeq?: number;
  /**
   * The root graph's checkpoint its first read of the root's thread named by id (LangGraph's time travel), until the
   * root's first put of the run lands: under durability "exit" the root's session stays where it was until then, and
   * its `checkpointer: true` subgraphs run on from that checkpoint (`put-on.ts`, `subgraph-memory.ts`).
   */
  travelledFrom?: string;
  /** Whether the run read the root's thread yet (`travelledFrom` is its first read's). */
  readRoot?: boolean;
}

/** A call a run's node journaled: by which run and task, and when on the saver's clock. */
interface CallMark {
  run: RunMark;
  task: string | undefined;
  at: number;
}

/** Pending writes that hold no task's result. */
const NO_RESULT = new Set(["__interrupt__", "__resume__", "__error__"]);
/** Pending writes that end a task's step without its result: a run reading them resumes the task or goes on after it. */
const SETTLED = new Set(["__interrupt__", "__error__"]);

/** Calls kept per session, the oldest forgotten first (a forgotten call counts as the put's own, as before). */
const PER_SESSION = 1024;
/** Sessions kept, the least recently written forgotten first. */
const SESSIONS = 4096;
/** Tasks whose wait or failure is remembered (`settled`), the oldest forgotten first. */
const SETTLED_TASKS = 4096;

export class RunCalls {
  readonly #runs = new WeakMap<object, ControlRuns>();
  readonly #calls = new Map<string, Map<string, CallMark>>();
  readonly #settled = new Map<string, number>();
  readonly #checkpoints = new Map<string, RunMark>();
  readonly #stopped = new WeakSet<RunMark>();
  readonly #forkRefused = new WeakSet<RunMark>();
  readonly #stoppedTasks = new Set<string>();
  readonly #made = new Map<string, { run: RunMark; at: number }>();
  #tick = 0;

  /**
   * Marks stopped the run `config` (a task's) belongs to: one of its nodes' calls was refused (`SESSION_MOVED`), so its
   * later puts are refused too. A task whose config lost the run's `control` (a tool a prebuilt `ToolNode` runs) is
   * noted by its id: the run is the one whose `putWrites` stores that task's writes (`stoppedWrites`).
   */
  stop(config: RunnableConfig | undefined): void {
    const run = this.runOf(config);
    if (run) this.#stopped.add(run);
    const task = config?.configurable?.__pregel_task_id;
    if (run || typeof task !== "string") return;
    this.#stoppedTasks.add(task);
    if (this.#stoppedTasks.size > SETTLED_TASKS) this.#stoppedTasks.delete(this.#stoppedTasks.values().next().value!);
  }

  /**
   * Notes that a call of the run `config` (a task's) belongs to was refused because the run's put forks away from it
   * (time travel under durability "exit", `run-fork-guard.ts`).
   */
  forkRefused(config: RunnableConfig | undefined): void {
    const run = this.runAt(config);
    if (run) this.#forkRefused.add(run);
  }

  /**
   * Stops the run `config` (a put's or its writes') belongs to when it failed (`failed`: its writes hold an error)
   * after one of its calls was refused so (`forkRefused`): its one put, at its end, is refused, leaving the thread
   * as it was before the run. Under "exit" LangGraph hands a failed run's writes over before that put.
   */
  failedAfterForkRefusal(config: RunnableConfig | undefined, failed: boolean): void {
    const run = this.runOf(config);
    if (failed && run && this.#forkRefused.has(run)) this.#stopped.add(run);
  }

  /** Whether the run `config` belongs to was stopped (`stop`). */
  stoppedRun(config: RunnableConfig | undefined): boolean {
    const run = this.runOf(config);
    return run !== undefined && this.#stopped.has(run);
  }

  /** Whether the writes of task `task` of the run `config` belongs to come from a stopped run (which they then stop). */
  stoppedWrites(config: RunnableConfig | undefined, task: string): boolean {
    if (!this.#stoppedTasks.delete(task)) return this.stoppedRun(config);
    const run = this.runOf(config);
    if (run) this.#stopped.add(run);
    return true;
  }

  /** Marks the run `config` belongs to as started now, if it was not yet (a read of its thread by its loop). */
  started(config: RunnableConfig | undefined): void {
    const control = controlOf(config);
    if (!control) return;
    let runs = this.#runs.get(control);
    if (!runs) this.#runs.set(control, (runs = { byInvoke: new WeakMap(), last: new Map() }));
    const invoke = invokeOf(config);
    const thread = threadOf(config);
    if (invoke ? runs.byInvoke.has(invoke) : runs.last.has(thread)) return;
    const run: RunMark = { start: ++this.#tick, id: randomUUID(), held: new Set(), resumed: new Map(), given: new Set() };
    if (invoke) runs.byInvoke.set(invoke, run);
    runs.last.delete(thread);
    runs.last.set(thread, run);
    if (runs.last.size > SESSIONS) runs.last.delete(runs.last.keys().next().value!);
  }

  /** Notes the branch the first read of the thread's head by the run `config` belongs to was served on (`readOn`). */
  readOn(config: RunnableConfig | undefined, branchId: string, seq?: number): void {
    const run = this.runOf(config);
    if (!run || run.readOn !== undefined) return;
    run.readOn = branchId;
    run.readSeq = seq;
  }

  /**
   * Notes a read of the root graph's thread by the run `config` belongs to, by id or of its head, served `servedId`
   * (`travelledFrom`): a head read serving the checkpoint its first read named (LangGraph checks the thread did not
   * move past it) is no travel.
   */
  readRoot(config: RunnableConfig | undefined, checkpointId: string | undefined, servedId: string | undefined): void {
    const run = this.runOf(config);
    if (!run) return;
    if (run.readRoot) {
      if (checkpointId === undefined && servedId !== undefined && servedId === run.travelledFrom) run.travelledFrom = undefined;
      return;
    }
    run.readRoot = true;
    run.travelledFrom = checkpointId;
  }

  /** Notes a put of the root graph's by the run `config` belongs to landed: its session stands where the run put. */
  rootPut(run: RunMark | undefined): void {
    if (run) run.travelledFrom = undefined;
  }

  /** Notes the tasks whose results a read served to the run `config` belongs to (its tuple's pending writes). */
  served(config: RunnableConfig | undefined, writes: readonly (readonly [string, string, unknown])[] | undefined): void {
    const run = this.runOf(config);
    if (!run || !writes) return;
    for (const [task, channel] of writes) {
      if (!NO_RESULT.has(channel)) run.held.add(task);
      else if (channel === "__resume__") run.given.add(task);
      // A wait or failure stored before this saver saw it (another process, or forgotten): the task's calls made
      // before the run started count as the step it resumes, as before.
      else if (SETTLED.has(channel)) run.resumed.set(task, Math.max(run.resumed.get(task) ?? 0, this.#settled.get(task) ?? run.start));
    }
  }

  /** Notes that the task `task` stored its wait or failure (`writes` of a `putWrites`), now on the saver's clock. */
  settled(task: string, writes: readonly (readonly [string, unknown])[]): void {
    if (!writes.some(([channel]) => SETTLED.has(channel))) return;
    this.#settled.delete(task);
    this.#settled.set(task, ++this.#tick);
    if (this.#settled.size > SETTLED_TASKS) this.#settled.delete(this.#settled.keys().next().value!);
  }

  /**
   * Notes that `run` stored the checkpoint `checkpointId` (with `task`: that task's pending writes there), now: a run
   * beside it served them went on from its step (`servedBeside`).
   */
  made(run: RunMark | undefined, checkpointId: string, task?: string): void {
    if (!run) return;
    const key = task === undefined ? checkpointId : `${checkpointId}\0${task}`;
    this.#made.delete(key);
    this.#made.set(key, { run, at: ++this.#tick });
    if (this.#made.size > SETTLED_TASKS) this.#made.delete(this.#made.keys().next().value!);
  }

  /**
   * Whether a read served the run `config` belongs to a checkpoint (`checkpointId`), or pending writes of it, that
   * another run stored after this one started: a run beside it (two resumes of one wait sent at once) went on there
   * first, and this run would go on from that run's step, whose calls its own put forks away from.
   */
  servedBeside(config: RunnableConfig | undefined, checkpointId: string, writes: readonly (readonly [string, ...unknown[]])[]): boolean {
    const run = this.runOf(config);
    if (!run) return false;
    const beside = (key: string) => {
      const mark = this.#made.get(key);
      return mark !== undefined && mark.run !== run && mark.at > run.start;
    };
    return beside(checkpointId) || writes.some(([task]) => beside(`${checkpointId}\0${task}`));
  }

  /** The run `config` belongs to (a put's, a task's), if it was seen starting. */
  runOf(config: RunnableConfig | undefined): RunMark | undefined {
    const control = controlOf(config);
    const runs = control ? this.#runs.get(control) : undefined;
    const invoke = invokeOf(config);
    return (invoke && runs?.byInvoke.get(invoke)) || runs?.last.get(threadOf(config));
  }

  /**
   * Notes that the run `config` belongs to goes on from the checkpoint `checkpointId` (it put it, or read it last): a
   * task of its step runs from it. A task whose config lost the run's `control` (a tool a prebuilt \`ToolNode\` runs,
   * invoked with a config of its own) is told by its checkpoint (`runAt`).
   */
  goesOnFrom(config: RunnableConfig | undefined, checkpointId: string | undefined): void {
    const run = this.runOf(config);
    if (!run || checkpointId === undefined) return;
    this.#checkpoints.delete(checkpointId);
    this.#checkpoints.set(checkpointId, run);
    if (this.#checkpoints.size > SETTLED_TASKS) this.#checkpoints.delete(this.#checkpoints.keys().next().value!);
  }

  /** The run a task's config belongs to: by its `control`, else by the checkpoint its step runs from. */
  runAt(config: RunnableConfig | undefined): RunMark | undefined {
    const run = this.runOf(config);
    if (run || controlOf(config)) return run;
    // The checkpoints of the task's step and of the steps of the graphs it runs in (`checkpoint_map`, as LangGraph
    // hands it to tasks), the innermost first.
    const map = config?.configurable?.checkpoint_map as Record<string, unknown> | undefined;
    if (typeof map !== "object" || map === null) return undefined;
    for (const id of Object.values(map).reverse()) {
      const run = typeof id === "string" ? this.#checkpoints.get(id) : undefined;
      if (run) return run;
    }
    return undefined;
  }

  /** Notes that `run` journaled the call `entryId` on the session, in a node of its task `task`. */
  journaled(sessionId: string, entryId: string, run: RunMark, task: string | undefined): void {
    let calls = this.#calls.get(sessionId);
    if (calls) this.#calls.delete(sessionId);
    else calls = new Map();
    this.#calls.set(sessionId, calls);
    if (this.#calls.size > SESSIONS) this.#calls.delete(this.#calls.keys().next().value!);
    calls.set(entryId, { run, task, at: ++this.#tick });
    if (calls.size > PER_SESSION) calls.delete(calls.keys().next().value!);
  }

  /**
   * Whether the call `entryId` is another run's, made while `run` was under way (after it started): a run beside it,
   * whose results `run`'s state does not hold. A call made before `run` started (the step `run` resumes made it, or an
   * earlier run that failed) is not: `run` read the thread with it; nor one of a task whose writes `run` was served.
   * But a call of a task `run` was served waiting (or failed) made after that wait was stored is: another run resuming
   * the same wait made it, its step not landed when `run` read the thread.
   * For a run's input (`input`), whose run has run no node yet, any other run's call is, whenever made (the other
   * run's step may still be under way), even when `run` was served its task's writes (an input leaves them out).
   */
  foreign(sessionId: string, entryId: string, run: RunMark, input = false): boolean {
    const mark = this.#calls.get(sessionId)?.get(entryId);
    return mark !== undefined && isForeign(mark, run, input);
  }

  /** Whether a run's node of this saver journaled the call `entryId` (and it is still remembered). */
  known(sessionId: string, entryId: string): boolean {
    return this.#calls.get(sessionId)?.has(entryId) ?? false;
  }

  /** Whether `run` journaled the call `entryId`. */
  own(sessionId: string, entryId: string, run: RunMark): boolean {
    return this.#calls.get(sessionId)?.get(entryId)?.run === run;
  }

  /** Whether any call of the session is another run's (`foreign`): a cheap first look. */
  anyForeign(sessionId: string, run: RunMark, input = false): boolean {
    const calls = this.#calls.get(sessionId);
    if (!calls) return false;
    for (const mark of calls.values()) if (isForeign(mark, run, input)) return true;
    return false;
  }
}

// A call made before the run started is another run's when it is of a task the run was served waiting (or failed),
// made after that wait was stored: another run resuming the same wait, its step not landed when this run read the thread.
// For a run's input, any other run's call is, its task's results served or not: an input starts a new step from the
// checkpoint, and LangGraph leaves the results stored there out of it.
const isForeign = (mark: CallMark, run: RunMark, input: boolean): boolean =>
  mark.run !== run &&
  (input ||
    (!(mark.task !== undefined && run.held.has(mark.task)) &&
      (mark.at > run.start ||
        (mark.task !== undefined && !run.given.has(mark.task) && mark.at > (run.resumed.get(mark.task) ?? Infinity)))));

/**
 * The runs of one `RunControl`: an app may pass one to all its invokes (to drain them together), so each invoke's run
 * is told by its stream `writer` (LangGraph makes one per invoke, handed to its tasks, puts and subgraphs as `control`
 * is); a config without one (a `getState` or `updateState` the app passes the control) is the control's latest run's
 * on the config's thread, never a run of another thread, which went on beside the thread's own.
 */
interface ControlRuns {
  byInvoke: WeakMap<object, RunMark>;
  /** The control's latest run per thread id, the least recently started forgotten first. */
  last: Map<string, RunMark>;
}

/** The invoke a config belongs to, when its control is shared: its stream `writer`. */
function invokeOf(config: RunnableConfig | undefined): object | undefined {
  const writer = (config as { writer?: unknown } | undefined)?.writer;
  return typeof writer === "function" ? writer : undefined;
}

/** The thread a config is of (its subgraphs' configs share it). */
function threadOf(config: RunnableConfig | undefined): string {
  const thread = config?.configurable?.thread_id;
  return typeof thread === "string" || typeof thread === "number" ? String(thread) : "";
}

function controlOf(config: RunnableConfig | undefined): object | undefined {
  const control = (config as { control?: unknown } | undefined)?.control;
  return typeof control === "object" && control !== null ? control : undefined;
}
