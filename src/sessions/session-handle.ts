// SessionHandle: one user's session, with every per-session verb of the public API. Over 450 lines: one short method
// per verb with its doc comment (what users read in their editor), each delegating to the file of its name.
import { atomic, type AtomicOptions } from "./atomic.js";
import { heldCheckpoint } from "./maintenance/checkpoint-hold.js";
import { attachWorkspace } from "./attach-workspace.js";
import { createCheckpoint } from "./checkpoint.js";
import { deleteCheckpoint } from "./delete-checkpoint.js";
import { expireCheckpoint } from "./expire.js";
import { diffFiles } from "./diff-files.js";
import { getState } from "./get-state.js";
import { invokeVerb } from "./invoke.js";
import { listCheckpoints } from "./list-checkpoints.js";
import { recordToolCall } from "./record-tool-call.js";
import { resolveToolCall } from "./resolve-tool-call.js";
import { restore } from "./restore.js";
import type { StateUpdate } from "./set-state.js";
import { setState } from "./set-state.js";
import { toolTrack } from "./tool-track.js";
import { hasTracked, loadTracked, settleTracked, track, type TrackOptions, type Tracked } from "./track.js";
import { turn } from "./turn.js";
import {
  idSchema,
  parseInput,
  type AppendOptions,
  type CheckpointInput,
  type CheckpointOptions,
  type CreateSessionInput,
  type EditOptions,
  type HistoryOptions,
  type UpdateSessionInput,
  type ListCheckpointsInput,
  type MoveOptions,
  type PlanTarget,
  type RecordToolCallInput,
  type ResolveToolCallInput,
  type ToolCallOptions,
  type InvokeOptions,
  type WriteOptions,
} from "../models/inputs.js";
import { readingInput, type JsonInput, type JsonValue } from "../models/json.js";
import type {
  Branch,
  Checkpoint,
  CheckpointDiff,
  EditInput,
  EditResult,
  DiffFilesOptions,
  FilesDiff,
  Message,
  MessageInput,
  MovePlan,
  RegenerateInput,
  MoveResult,
  Page,
  RestoredCheckpoint,
  SessionInfo,
  SessionSummary,
  TimelineItem,
  ToolInvocation,
  Turn,
  VersionedMessage,
  Versions,
  WorkspaceInfo,
} from "../models/types.js";
import type { ToolDefinition } from "../tools/define-tool.js";
import { refuseInsideMove, servedHandler } from "../tools/handler-scope.js";
import { orderedCompound } from "./core/call-order.js";
import { append } from "./append.js";
import { listBranches } from "./branches.js";
import { info } from "./info.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { diff } from "./diff.js";
import { edit } from "./edit.js";
import { handoff } from "./handoff.js";
import { history } from "./history.js";
import { message } from "./message.js";
import { nameBranch } from "./name-branch.js";
import { plan } from "./plan.js";
import { redo } from "./redo.js";
import { regenerate } from "./regenerate.js";
import { rollback } from "./rollback.js";
import { summary } from "./summary.js";
import { setRetention, type RetentionPolicy } from "./set-retention.js";
import { switchBranch } from "./switch-branch.js";
import { timeline } from "./timeline.js";
import { undo } from "./undo.js";
import { update } from "./update.js";
import { versions } from "./versions.js";
import { withCheckpoints, type WithCheckpointsOptions } from "./with-checkpoints.js";
import { dropBlockRequests, inBlock, type BlockOwn } from "./core/block-scope.js";

const id = (value: unknown, field: string): string => parseInput(idSchema, value, field);

/**
 * Runs a call once the database is ready: at once (its inputs validated and serialized as the call is made, so a
 * caller changing them afterwards changes nothing) unless recovery at open is still under way.
 */
export type WhenReady = <T>(fn: () => Promise<T>) => Promise<T>;

/** @internal The engine behind a handle, for this package's adapters (forkpoint/ai, forkpoint/openai-agents). */
export interface SessionEngine {
  ctx: EngineContext;
  /** Runs an engine call as the handle's own calls run. */
  run: <T>(fn: (ctx: EngineContext, ref: SessionRef) => Promise<T>) => Promise<T>;
}
/** @internal */
export let sessionEngine: (s: SessionHandle) => SessionEngine;

/**
 * A handle on one session, scoped to its owner. Get one from `fp.createSession` or `fp.getSession`.
 * Every method is async and reads or writes the database in one transaction.
 */
export class SessionHandle {
  readonly id: string;
  readonly userId: string;
  readonly #ctx: EngineContext;
  readonly #whenReady: WhenReady;

  static {
    sessionEngine = (s) => ({ ctx: s.#ctx, run: (fn) => s.#run(fn) });
  }

  /** @internal */
  constructor(ctx: EngineContext, ref: SessionRef, whenReady: WhenReady) {
    this.#ctx = ctx;
    this.id = ref.id;
    this.userId = ref.userId;
    this.#whenReady = whenReady;
  }

  #run<T>(fn: (ctx: EngineContext, ref: SessionRef) => Promise<T>): Promise<T> {
    return this.#whenReady(() => {
      // From inside an undo or replay of this session's move: refused, the session being between two positions.
      refuseInsideMove(this.id);
      return fn(this.#ctx, { id: this.id, userId: this.userId });
    });
  }

  /**
   * A move run as the handle's calls run, its result once the objects tracked on this session have loaded the state it
   * left: also when it found the session there already (no event), unless it moved the files only, or it is a retry
   * (its request id applied already: it answers as the first call did, which loaded them; changes since stay).
   */
  async #move<T>(options: MoveOptions | undefined, fn: (ctx: EngineContext, ref: SessionRef) => Promise<T>): Promise<T> {
    // Read before the move validates it: a getter that throws is the caller's input that cannot be read.
    const requestId = readingInput(() => options?.requestId, "requestId");
    const retry =
      typeof requestId === "string" &&
      hasTracked(this.#ctx, this.id) &&
      (await this.#ctx.store.read((tx) => tx.getRequest(this.id, requestId))) !== undefined;
    const result = await this.#run(fn);
    await settleTracked(this.#ctx, this.id, options?.scope !== "files" && !retry);
    return result;
  }

  /** The session's id, owner, title, metadata, current branch and times. */
  info(): Promise<SessionInfo> {
    return this.#run((ctx, ref) => info(ctx, ref));
  }

  /**
   * The session at a glance: its info, how many branches and checkpoints it has, the current branch's head and
   * message count, its newest message and newest checkpoint, and its tool calls by status.
   * @example const { messages, branches, lastMessage, checkpoints } = await s.summary()
   */
  summary(): Promise<SessionSummary> {
    return this.#run((ctx, ref) => summary(ctx, ref));
  }

  /**
   * Appends one message or several (one transaction) to the current branch. With `{ requestId }` the call is applied
   * once per session: a retry with the same id (after a timeout, a lost connection, from another server) writes
   * nothing and returns what the first call returned; the same id with other messages is `ConflictError`
   * `REQUEST_ID_REUSED`. With `{ ifAt: { branchId, head } }` it writes only while the session's current branch (and
   * its head position) is that, else `ConflictError` `SESSION_MOVED` (every write and move takes both). With
   * `{ after: messageId }` the messages follow that message on its own lineage: on the current branch while it is the
   * lineage's last message; once the session moved on, on the branch whose last message it is, or a new branch forked
   * right after it (a version of what follows it there). The current branch stays; each message names its branch.
   * @example await s.append(answer, { after: question.id, requestId: "answer-7f3" })
   */
  append(messages: MessageInput | MessageInput[], options?: AppendOptions): Promise<Message[]> {
    return this.#run((ctx, ref) => append(ctx, ref, messages, options));
  }

  /**
   * Appends messages and takes a checkpoint after them, in one transaction: a chat turn that lands whole or
   * not at all, and one commit instead of two. With no messages it is `checkpoint()`. An `everyMessages` policy
   * still adds its automatic checkpoints, even one at the same position as the turn's own. `{ requestId, ifAt, after }`
   * as for `append` (with `after`, the checkpoint goes with the messages, on the branch they land on).
   * @example const { messages, checkpoint } = await s.turn([question, answer], { name: "turn 3" }, { requestId })
   */
  turn(messages: MessageInput | MessageInput[], checkpoint?: CheckpointInput, options?: AppendOptions): Promise<Turn> {
    return this.#run((ctx, ref) => turn(ctx, ref, messages, checkpoint, options));
  }

  /**
   * The messages of the current branch's lineage (or of `branchId`'s), oldest first. With `limit` and/or `before`
   * (a position, exclusive): the last `limit` messages before it, so `before: page[0].position` is the previous
   * page. With `withVersions: true` each message carries its `< i/n >` picker, read for the whole page at once.
   * @example const page = await s.history({ limit: 50, withVersions: true })
   */
  history(options: HistoryOptions & { withVersions: true }): Promise<VersionedMessage[]>;
  history(options?: HistoryOptions): Promise<Message[]>;
  history(options?: HistoryOptions): Promise<Message[]> {
    return this.#run((ctx, ref) => history(ctx, ref, options));
  }

  /** One message of this session, on any of its branches (`NotFoundError` for an unknown or another session's id). */
  message(messageId: string): Promise<Message> {
    return this.#run((ctx, ref) => message(ctx, ref, id(messageId, "messageId")));
  }

  /**
   * Renames the session and/or replaces its metadata (null clears either; a key left out is kept). Returns `info()`.
   * @example await s.update({ title: "Trip to Lisbon" })
   */
  update(fields: UpdateSessionInput, options?: WriteOptions): Promise<SessionInfo> {
    return this.#run((ctx, ref) => update(ctx, ref, fields, options));
  }

  /** Names a branch of this session (null clears it). Names need not be unique: ids identify branches. */
  nameBranch(branchId: string, name: string | null): Promise<Branch> {
    return this.#run((ctx, ref) => nameBranch(ctx, ref, id(branchId, "branchId"), name));
  }

  /** The current state document (`{}` for a new session). */
  getState(): Promise<JsonValue> {
    return this.#run((ctx, ref) => getState(ctx, ref));
  }

  /**
   * Replaces the state, or applies `(previous) => next` atomically. Returns the new state. `{ requestId, ifAt }` as
   * for `append` (an updater function is told apart from another by its source text).
   */
  setState(next: StateUpdate, options?: WriteOptions): Promise<JsonValue> {
    return this.#run((ctx, ref) => setState(ctx, ref, next, options));
  }

  /**
   * Runs a registered tool (args default to `{}`), journaling it first; resolves to its result, or rejects with
   * its error after recording it. A result that is not plain JSON is recorded as JSON.stringify writes it.
   * Pass the tool's definition instead of its name for typed args and result (it must be the registered one).
   * With `{ requestId }` the tool runs once per session and id: a retry returns the recorded result (or rejects with
   * the recorded error, an `Error` of its message and name), `ConflictError` `CALL_IN_PROGRESS` while the first call
   * still runs, `CALL_UNKNOWN` when a crash left it without an outcome (see `resolveToolCall`). With
   * `{ after: messageId }` (an agent loop's question) the call follows that message on its own lineage, as `append`'s
   * messages do: on the current branch while it is the lineage's last message (tool calls and state changes after it
   * do not count); once the session moved on, on the branch whose last message it is, or a new branch forked right
   * after it. The current branch stays: the call's effect is then held as a call off the lineage (the next move undoes
   * it, unless it goes to the call's branch, which then does not run it again). With `{ callId }` (the framework's id
   * of the call, as a LangGraph tool's `config.toolCall.id`) the call is recorded under it, as `recordToolCall`'s: a
   * LangGraph input saved after its run's calls names them, so that an edit of it undoes them.
   * @example const { bytes } = await s.invoke(writeFile, { path: "a.txt", text: "hi" }, { requestId: "write-1" })
   */
  invoke<Args extends JsonValue, Result extends JsonValue | void>(
    tool: ToolDefinition<Args, Result>,
    args: Args,
    options?: InvokeOptions,
  ): Promise<Result>;
  invoke(tool: string, args?: JsonInput, options?: InvokeOptions): Promise<any>;
  invoke(tool: string | ToolDefinition, args: JsonInput = {}, options?: InvokeOptions): Promise<any> {
    // A definition (typed form) names its tool; it must be the one registered, so its types are the ones that run.
    return this.#run(async (ctx, ref) => {
      const name = ctx.tools.nameOf(typeof tool === "object" && tool !== null ? tool : id(tool, "tool"));
      return invokeVerb(ctx, ref, name, args, options);
    });
  }

  /**
   * Records a call some framework already ran, so its registered `undo` can reverse it later. `{ requestId, ifAt }` as
   * for `append`, `{ after }` as for `invoke`.
   */
  recordToolCall(call: RecordToolCallInput, options?: ToolCallOptions): Promise<ToolInvocation> {
    return this.#run((ctx, ref) => recordToolCall(ctx, ref, call, options));
  }

  /**
   * Records what became of a call a crash left `running` (moves report it `unknown`), once its owner is gone:
   * `{ status: "succeeded", result }` (its effect is in the world: later moves undo it as any other, given that result)
   * or `{ status: "failed", error }` (never undone). `ConflictError` `CALL_NOT_UNKNOWN` for a call with an outcome,
   * `CALL_IN_PROGRESS` while its owner may still run it. Returns the call as completed.
   * @example await s.resolveToolCall(call.id, { status: "succeeded", result: { sent: true } })
   */
  resolveToolCall(invocationId: string, outcome: ResolveToolCallInput): Promise<ToolInvocation> {
    return this.#run((ctx, ref) => resolveToolCall(ctx, ref, id(invocationId, "invocationId"), outcome));
  }

  /** The tool invocations of the current lineage (or `branchId`'s), in order, with status. */
  toolTrack(options?: { branchId?: string }): Promise<ToolInvocation[]> {
    return this.#run((ctx, ref) => toolTrack(ctx, ref, options));
  }

  /** Marks the current position: O(1), nothing is copied. Takes `requestId` and `ifAt` beside its fields, as `append` does. */
  checkpoint(options?: CheckpointOptions): Promise<Checkpoint> {
    return this.#run((ctx, ref) => createCheckpoint(ctx, ref, options));
  }

  /** Reads a checkpoint (state, history, tool track) after verifying its checksum. Read-only. */
  async restore(checkpointId: string): Promise<RestoredCheckpoint> {
    const restored = await this.#run((ctx, ref) => restore(ctx, ref, id(checkpointId, "checkpointId")));
    // Read-only for the database; objects tracked on this session take the checkpoint's fields (see `track`).
    loadTracked(this.#ctx, this.id, restored.state);
    return restored;
  }

  /** This session's checkpoints, newest first (the per-user listing filtered to this session). */
  listCheckpoints(filter: Omit<ListCheckpointsInput, "userId" | "sessionId"> = {}): Promise<Page<Checkpoint>> {
    return this.#run((ctx, ref) =>
      listCheckpoints(
        ctx,
        readingInput(() => ({ ...filter, userId: ref.userId, sessionId: ref.id }), "filter"),
      ),
    );
  }

  /**
   * Expires a checkpoint now, as its TTL would: listings and restore stop finding it, a branch forked from it keeps its
   * history, and `prune` deletes it. Other sessions' checkpoints are not found (`NotFoundError`).
   */
  expire(checkpointId: string): Promise<void> {
    return this.#run((ctx, ref) => expireCheckpoint(ctx, ref, id(checkpointId, "checkpointId")));
  }

  /**
   * Sets the session's retention policy (`null` or `{}` clears it) and applies it at once; then every `checkpoint()` and
   * `fp.prune()` apply it. See `RetentionPolicy` for what it keeps.
   * @example await s.setRetention({ keepFirst: true, keepLast: 10, onePerName: true, keepFor: "7d" })
   */
  setRetention(policy: RetentionPolicy | null): Promise<void> {
    return this.#run((ctx, ref) => setRetention(ctx, ref, policy));
  }

  /**
   * Deletes a checkpoint; one a branch forks from is refused (`ConflictError`, code `CHECKPOINT_IN_USE`). With a
   * `requestId`, a retry after the checkpoint is gone succeeds as the first call did.
   */
  deleteCheckpoint(checkpointId: string, options?: WriteOptions): Promise<void> {
    return this.#run((ctx, ref) => deleteCheckpoint(ctx, ref, id(checkpointId, "checkpointId"), options));
  }

  /**
   * Attaches a directory: from now on each `checkpoint()` (and `turn()`) captures its files (each content stored once), `diffFiles`
   * compares them, and moves with `scope: "files"` or `"both"` make the directory match the target again.
   * `exclude` takes .gitignore-style patterns; the directory's own .gitignore files are honoured too (nested, with
   * negations) unless `gitignore: false`, and then so is `.git` (a directory, or a worktree's or submodule's file); the
   * database's own files are always left out. What cannot be stored (unreadable, over the size limit, a FIFO, a
   * socket, a link) is left out too, and said in the result's `skipped`, as `checkpoint()` and `diffFiles` say it.
   * @example await s.attachWorkspace("./project", { exclude: ["*.log"] })
   */
  attachWorkspace(dir: string, options?: { exclude?: string[]; gitignore?: boolean }): Promise<WorkspaceInfo> {
    return this.#run((ctx, ref) => attachWorkspace(ctx, ref, dir, options ?? {}));
  }

  /**
   * The workspace files' changes from a checkpoint to `"disk"` (the directory now) or to another checkpoint:
   * `{ added, modified, deleted, patch }` with a unified diff (binary files named, not shown). `{ patch: false }`: the
   * lists only; `{ maxPatchChars }`: the patch cut at that length (`patchTruncated`).
   * @example await s.diffFiles(cp.id, "disk", { patch: false })
   */
  diffFiles(checkpointId: string, target: "disk" | string = "disk", options?: DiffFilesOptions): Promise<FilesDiff> {
    return this.#run((ctx, ref) => diffFiles(ctx, ref, checkpointId, target, options));
  }

  /**
   * What a rollback (`{ checkpointId }`), switch (`{ branchId }`) or edit (`{ messageId }`) would do, without doing it
   * (an edit `edit` would refuse, `RUN_INTERLEAVED`, is refused here too). With `scope` (as the move takes it,
   * "conversation" when left out), the move with that scope: with `"files"` or `"both"`, the files its restore would
   * write and delete and the drift that refuses it (a `"files"` move runs no tool and keeps the conversation where it is).
   * A move of the session that stopped midway and runs nowhere (its process died) is finished first, as the move would
   * finish it before its own steps, so the plan is of the session as the move finds it; one that cannot be finished
   * here (its tools not registered, a read-only handle) is said in `blocked`.
   */
  plan(target: PlanTarget): Promise<MovePlan> {
    return this.#run((ctx, ref) => plan(ctx, ref, target));
  }

  /**
   * Forks a new branch at the checkpoint and makes it current; undoes (or replays) tool effects to match. Every move
   * takes `{ requestId }` (a retried or double-clicked move is made once: the retry moves nothing and returns the first
   * call's result; while the first still moves the session from another handle, process or server, the retry is
   * `ConflictError` `MOVE_IN_PROGRESS`, as `invoke`'s is `CALL_IN_PROGRESS`) and `{ ifAt: { branchId, head } }` (made
   * only while the session is there).
   * @example await s.rollback(cp.id, { requestId: "click-7f3", ifAt: { branchId: info.currentBranchId } })
   */
  rollback(checkpointId: string, options?: MoveOptions): Promise<MoveResult> {
    return this.#move(options, (ctx, ref) => rollback(ctx, ref, id(checkpointId, "checkpointId"), options));
  }

  /**
   * A new version of a message: a branch forked just before it, with `next` appended, made current (a message whose
   * metadata names, under `forkpointCausedCalls`, tool calls it caused that were journaled before it, as the Agents
   * adapter's run inputs do, forks before the earliest of them instead, so they are undone with it; when another
   * writer's message lies between them and it, the edit is refused: `ConflictError` `RUN_INTERLEAVED`). `next.role`
   * defaults to the original's. With `{ checkpoint: { name } }` a checkpoint at the new message is written in the
   * same transaction (`result.checkpoint`); in a session with a workspace it captures the files as the move left
   * them, as `checkpoint()` does.
   * @example const { message, checkpoint } = await s.edit(id, { content: "new text" }, { checkpoint: { name: "v2" } })
   */
  edit(messageId: string, next: EditInput, options?: EditOptions): Promise<EditResult> {
    return this.#move(options, (ctx, ref) => edit(ctx, ref, id(messageId, "messageId"), next, options));
  }

  /**
   * A new answer to the same question: a new version of an assistant message (same position, forked just before it),
   * as `edit` makes one. Another role's message is refused with a `ValidationError` (field `messageId`).
   * @example await s.regenerate(answer.id, { content: "Another take" }, { checkpoint: { name: "retry" } })
   */
  regenerate(messageId: string, answer: RegenerateInput, options?: EditOptions): Promise<EditResult> {
    return this.#move(options, (ctx, ref) => regenerate(ctx, ref, id(messageId, "messageId"), answer, options));
  }

  /** The `< i/n >` versions of a message across branches, in creation order. */
  versions(messageId: string): Promise<Versions> {
    return this.#run((ctx, ref) => versions(ctx, ref, id(messageId, "messageId")));
  }

  /** The session's branches (internal sessions), in creation order; see `branchTree` for nesting. */
  branches(): Promise<Branch[]> {
    return this.#run((ctx, ref) => listBranches(ctx, ref));
  }

  /**
   * Makes another branch current; the world moves to its head. The branch a failed `atomic()` block wrote on, its head
   * still where the block left it, is entered where the block's rollback left the session (the result's `branch`).
   */
  switchBranch(branchId: string, options?: MoveOptions): Promise<MoveResult> {
    return this.#move(options, (ctx, ref) => switchBranch(ctx, ref, id(branchId, "branchId"), options));
  }

  /** Takes the session back to where its last move (rollback, switch, edit) left from; the world follows. */
  undo(options?: MoveOptions): Promise<MoveResult> {
    return this.#move(options, (ctx, ref) => undo(ctx, ref, options));
  }

  /** Does the last undone move again. */
  redo(options?: MoveOptions): Promise<MoveResult> {
    return this.#move(options, (ctx, ref) => redo(ctx, ref, options));
  }

  /** Compares two checkpoints: state paths, shared message/tool prefix, each side's rest. */
  diff(checkpointA: string, checkpointB: string): Promise<CheckpointDiff> {
    return this.#run((ctx, ref) => diff(ctx, ref, id(checkpointA, "checkpointA"), id(checkpointB, "checkpointB")));
  }

  /**
   * Seeds a new session (for another user or agent) from a checkpoint: its history and state, not its tool
   * calls. The new session's `info().origin` links back here, and this session's timeline shows the handoff.
   */
  async handoff(checkpointId: string, target: CreateSessionInput): Promise<SessionHandle> {
    const created = await this.#run((ctx, ref) => handoff(ctx, ref, id(checkpointId, "checkpointId"), target));
    return new SessionHandle(this.#ctx, created, this.#whenReady);
  }

  /**
   * A guarded block: a checkpoint, then `block`; if it throws, the session rolls back to the checkpoint (state,
   * messages, tool effects) and the error is rethrown (`AtomicRollbackError` if the rollback fails too). While the block
   * runs, its checkpoint is held: no retention policy expires it and no prune deletes it, from any handle or server.
   * A rollback refused for a call or move running elsewhere waits for it (`waitMs`, default 30 s). Like a move, it is
   * one call in the order this handle's calls on the session were made: the block's own calls run at once, while a
   * call made after `atomic()` outside the block (not awaited, or from another request) waits until the block and its
   * rollback have ended, and lands after them. The rollback is not in the undo history: a failed block is as if it
   * never ran, and `undo()` takes back the user's last move before it (it never runs the block's calls again); `redo()`
   * then comes back to where the block's rollback left the session. Any move to the head of a branch the block wrote
   * on (`switchBranch`, an undo or redo ending there) lands there too while nobody has written on that branch since.
   * @example await s.atomic(async () => { await s.invoke("write_file", args); await s.setState(next); })
   */
  atomic<T>(block: () => Promise<T> | T, options?: AtomicOptions): Promise<T> {
    // The block's own checkpoint stays a rollback target even if it was expired meanwhile (`expire`, say); its rollback
    // is not the user's move: undo and redo do not see it. It forgets the request ids the block's own calls recorded.
    const target = {
      // After the tool calls running on the session end, as a move waits for them: what their runs write is theirs, not
      // the block's, and must not be rolled back with it (a handler's own block runs inside its call).
      begin: (o: { name: string }) =>
        this.#run((ctx, ref) =>
          servedHandler(this.id)
            ? heldCheckpoint(ctx, ref, o)
            : ctx.withSessionLock(ref.id, () => heldCheckpoint(ctx, ref, o), "exclusive", "atomic()"),
        ),
      guard: <R>(run: (own: BlockOwn) => Promise<R>) => inBlock(this.#ctx.events, run),
      rollback: async (checkpointId: string, o: MoveOptions | undefined, own: BlockOwn) => {
        const moved = await this.#move(o, (ctx, ref) =>
          rollback(ctx, ref, checkpointId, o, undefined, { expired: true, unrecorded: true, block: own }),
        );
        // Forgotten, those ids are no longer an enclosing block's: another opener may record them before it fails.
        dropBlockRequests(this.#ctx.events, this.id, [...(own.requests.get(this.id) ?? [])]);
        return moved;
      },
    };
    const guarded = () => atomic(target, block, options);
    // One exclusive call of the handle's order (see call-order.ts): a write made after it is not rolled back with the
    // block. From a tool handler of this session, the block runs as the handler's own calls do (they would wait for it).
    return servedHandler(this.id) ? guarded() : orderedCompound(this.#ctx.events, this.id, guarded);
  }

  /** `fn` wrapped so that a checkpoint follows every `every`th call it completes (counted per wrapper). */
  withCheckpoints<A extends unknown[], R>(fn: (...args: A) => R, options?: WithCheckpointsOptions): (...args: A) => Promise<Awaited<R>> {
    return withCheckpoints((o) => this.checkpoint(o), fn, options);
  }

  /**
   * Keeps `fields` of a plain object in the session state: `save()` writes them (top-level keys of the state, or
   * under `key`); rollbacks (one to where the session is too, and a failed `atomic` block's), edits, switches and
   * `restore` load them back into the object (a files-only move does not); `stop()` detaches.
   * @example const t = s.track(agent, { fields: ["memory", "callCount"] }); await t.save();
   */
  track<T extends object>(target: T, options: TrackOptions): Tracked<T> {
    return track(this.#ctx, this, target, options);
  }

  /** Everything that happened in the session across branches, newest first, paginated. */
  timeline(options?: { limit?: number; cursor?: string | null }): Promise<Page<TimelineItem>> {
    return this.#run((ctx, ref) => timeline(ctx, ref, options));
  }
}
