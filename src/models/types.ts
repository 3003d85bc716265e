// The plain-data shapes the public API returns. All times are `Date` objects.
// Just over 450 lines, mostly doc comments: one file so that the API reference lists the returned shapes together.
import type { JsonInput, JsonObject, JsonObjectInput, JsonValue } from "./json.js";

/** One page of a listing, newest first. Pass `nextCursor` back as `cursor` for the next page; null on the last page. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** A user's conversation: the external session. */
export interface SessionInfo {
  id: string;
  userId: string;
  title: string | null;
  metadata: JsonObject | null;
  /** The internal session (branch) that is current: where `append` writes and where the world is. */
  currentBranchId: string;
  /** Set when the session was seeded by `handoff` from another session's checkpoint. */
  origin: { sessionId: string; checkpointId: string } | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A `listSessions` item: the session's `info()`, with what a sidebar row shows of its current branch, read with the
 * listing itself (the same statement, not a `summary()` per session).
 */
export interface SessionListItem extends SessionInfo {
  /** The last message of the current branch's lineage (what `history()` ends with), as a preview; null before the first. */
  lastMessage: MessagePreview | null;
  /** Messages of the current branch's lineage: how many `history()` returns (as `summary().messages`). */
  messageCount: number;
}

/** A message as a list row shows it: who said it, and the start of what it says. `s.message(id)` reads it whole. */
export interface MessagePreview {
  id: string;
  /** An id the caller chose (e.g. the chat UI's own id), if given. */
  clientId: string | null;
  branchId: string;
  position: number;
  role: string;
  /**
   * The content's text on one line (whitespace runs as one space), at most `PREVIEW_LENGTH` (200) characters, cut
   * between user-perceived characters and ending with "…" when cut. Of content that is not a string, the text of its
   * text parts (`{ type: "text" | "input_text" | "output_text", text }`, as the AI SDK, OpenAI Agents and LangChain
   * write them; an item's `content`), joined by spaces; "" when it has none (a tool call, say).
   */
  preview: string;
  /** Whether `preview` was cut. */
  truncated: boolean;
  createdAt: Date;
}

/** `s.summary()`: a session at a glance, for a list row or a status line: what `s.info()` returns, and counts. */
export interface SessionSummary extends SessionInfo {
  /** Internal sessions (branches) in the session's tree, the root included. */
  branches: number;
  /** Messages of the current branch's lineage: how many `history()` returns. */
  messages: number;
  /** The current branch's head: the position of its lineage's last entry (messages, state changes, tool calls). */
  position: number;
  /** The newest message of the current lineage (what `history()` ends with); null before the first. */
  lastMessage: Message | null;
  /** Checkpoints of the session on every branch, automatic ones included, not expired (what listings show). */
  checkpoints: number;
  /** The newest of those; null when there is none. */
  latestCheckpoint: Checkpoint | null;
  /** Those checkpoints counted by name; unnamed ones (automatic ones among them) are left out. */
  checkpointsByName: Record<string, number>;
  /** When the oldest of those checkpoints was made; null when there is none. */
  firstCheckpointAt: Date | null;
  /** When the newest of those checkpoints was made; null when there is none. */
  lastCheckpointAt: Date | null;
  /** Milliseconds from the first to the last of them (0 with one); null when there is none. */
  checkpointSpanMs: number | null;
  /**
   * Tool calls on the current lineage (what `toolTrack()` returns), by status; and `applied`: how many calls' effects
   * are applied now, in the session's world (what a rollback to before them would undo). A call that landed off the
   * current lineage (`invoke(tool, args, { after })` once the session had moved on) counts there too, so `applied`
   * may exceed `total`.
   */
  toolCalls: { total: number; running: number; succeeded: number; failed: number; applied: number };
}

/** An internal session: one linear run of entries, forked from its parent at `forkPosition`. */
export interface Branch {
  id: string;
  sessionId: string;
  /** The internal session it forked from; null for the root. */
  parentId: string | null;
  /** The checkpoint it was forked at (rollback), if any. */
  forkCheckpointId: string | null;
  /** The lineage position it starts after (0 for the root). */
  forkPosition: number;
  name: string | null;
  /** Why it exists: "root" (a session's first branch, a handed-off session's too), "rollback" or "edit". */
  reason: BranchReason;
  /** The position of its last entry (its lineage's length). */
  head: number;
  /** True for the session's current branch. */
  current: boolean;
  createdAt: Date;
}
export type BranchReason = "root" | "rollback" | "edit";

/** A branch in `branches()`'s tree view: the branch with its children. */
export interface BranchTreeNode extends Branch {
  children: BranchTreeNode[];
}

/** A chat message recorded on a branch. */
export interface Message {
  id: string;
  branchId: string;
  /** Its position in the branch's lineage (positions count every entry: messages, state changes, tool calls). */
  position: number;
  role: string;
  content: JsonValue;
  /** An id the caller chose (e.g. the chat UI's own id), if given. */
  clientId: string | null;
  metadata: JsonObject | null;
  createdAt: Date;
}

/**
 * What `append`, `turn` and `edit` take. `content` and `metadata` accept a framework's own types (interfaces without
 * an index signature, readonly arrays) as they are; they are checked to be plain JSON when the call is made.
 */
export interface MessageInput {
  role: string;
  content: JsonInput;
  /** null: none (as a read gives it). */
  clientId?: string | null;
  /** null: none (as a read gives it). */
  metadata?: JsonObjectInput | null;
}

/** Status of a tool invocation: `running` until it completes (or forever, if the process died while it ran). */
export type ToolStatus = "running" | "succeeded" | "failed";

/** An error recorded for a failed tool call. */
export interface ToolErrorInfo {
  message: string;
  name?: string;
}

/** A tool call on the track. */
export interface ToolInvocation {
  id: string;
  branchId: string;
  position: number;
  tool: string;
  args: JsonValue;
  status: ToolStatus;
  /**
   * What the call's run returned (its completion, written once). A replay's own result is not shown here, nor in a
   * move's `replayed`: the journal keeps it, and the call's next undo receives it (the most recent application's).
   */
  result: JsonValue | null;
  error: ToolErrorInfo | null;
  /** The framework's own id for the call, when recorded with one. */
  callId: string | null;
  /** True when its effect is in the world now (it ran, or was replayed, and has not been undone). */
  applied: boolean;
  createdAt: Date;
  completedAt: Date | null;
}

/** A change of the session state document. */
export interface StateChange {
  id: string;
  branchId: string;
  position: number;
  createdAt: Date;
}

/** Any entry of a branch's log, tagged with its kind. */
export type Entry = ({ kind: "message" } & Message) | ({ kind: "tool" } & ToolInvocation) | ({ kind: "state" } & StateChange);

/** A named, immutable point in a session: a branch and a position. */
export interface Checkpoint {
  id: string;
  sessionId: string;
  branchId: string;
  position: number;
  name: string | null;
  /** True for checkpoints made by the automatic policy. */
  auto: boolean;
  metadata: JsonObject | null;
  userId: string;
  /** SHA-256 over the checkpoint's fields, its state and the hash chain of its history. */
  checksum: string;
  createdAt: Date;
  expiresAt: Date | null;
  /**
   * On what `checkpoint()` (or `turn()`) returns for a session with a workspace: the paths its capture left out because
   * forkpoint cannot store them, with why; present when any. Not kept with the checkpoint.
   */
  skipped?: SkippedFile[];
}

/** What `restore` returns: a checkpoint materialized, after its checksum was verified. */
export interface RestoredCheckpoint {
  checkpoint: Checkpoint;
  state: JsonValue;
  history: Message[];
  toolTrack: ToolInvocation[];
}

/** A tool step that threw during a move. */
export interface FailedStep {
  invocation: ToolInvocation;
  /** "undo" or "replay". */
  step: "undo" | "replay";
  error: string;
}

/** What a move (rollback, edit, switch) did to the world, or, for `plan`, would do. */
export interface MoveResult {
  /** The branch that is current after the move. */
  branch: Branch;
  /**
   * Invocations undone, in the order undone (newest application first). Undo is LIFO over everything applied: a call
   * that stays (on the target's lineage) but was applied after one the move undoes is undone first, and replayed after
   * it (in `replayed` too), so its effect comes back on top. With `scope: "both"`, one whose effect the restored files
   * hold comes back with them instead (applied again, not run).
   */
  undone: ToolInvocation[];
  /** Invocations replayed, oldest first. */
  replayed: ToolInvocation[];
  /**
   * Irreversible invocations the move passed: their effect stays in the world. With them, the reversible ones it would
   * undo that were applied before a call it keeps and cannot undo (its tool has no undo, is not registered, or its
   * outcome is unknown): a saga stops compensating there, so they stay applied too (refused with `refuseIrreversible`).
   */
  skipped: ToolInvocation[];
  /**
   * Reversible invocations the move had to undo or replay whose tool is not registered here with an undo (only with
   * `unregistered: "leave"`; otherwise the move is refused): left as they are, applied or not.
   */
  unregistered: ToolInvocation[];
  /** Steps whose handler threw (only with `onUndoError: "continue"`). */
  failed: FailedStep[];
  /** Invocations whose outcome is unknown (left `running` by a crash): never undone or replayed automatically. */
  unknown: ToolInvocation[];
  /**
   * With `scope: "files"` or `"both"`: the workspace files its restore wrote and deleted to match the target (not those
   * the move's undos, run first, already set right: `plan()` lists those too); `kept` (present
   * when any): files left as they are. Either someone changed them while the restore ran, or while the move's undos
   * ran outside the files the undone calls changed (a save by hand, a log an undo writes): left with their newer
   * content (never overwritten or deleted), they count as changed since forkpoint last saw them (the next move refuses
   * to overwrite them unsaved, as any drift). Or, under `onUndoError: "continue"`, they may hold the effect of a call
   * whose undo failed (in `failed`): that call stays applied, so its files stay with it (not drift).
   */
  files?: { written: string[]; deleted: string[]; kept?: string[] };
  /** With `force: true`, when files had changed outside forkpoint: the checkpoint they were saved in before the move. */
  savedDrift?: SavedDrift;
}

/** Files a forced move found changed outside forkpoint, and the checkpoint (on the branch left) that holds them. */
export interface SavedDrift {
  checkpointId: string;
  /**
   * The paths added, modified or deleted since forkpoint last saw the directory that the move overwrites (those
   * `plan().drift` lists; for a "conversation" move, those its undos and replays write). The checkpoint holds the whole
   * directory, drift the move leaves as it is included.
   */
  files: string[];
}

/** A session's attached workspace (`attachWorkspace`). */
export interface WorkspaceInfo {
  /** Absolute path of the directory. */
  dir: string;
  /** .gitignore-style patterns left out of snapshots. */
  exclude: string[];
  /** Files in the snapshot just taken. */
  files: number;
  /** The paths left out because forkpoint cannot store them, with why; present when any (see `SkippedFile`). */
  skipped?: SkippedFile[];
}

/** What `diffFiles` returns: paths relative to the workspace, and a unified diff from the checkpoint to the target. */
export interface FilesDiff {
  added: string[];
  modified: string[];
  deleted: string[];
  /** The unified diff ("" with `{ patch: false }`). */
  patch: string;
  /** Present (true) when `maxPatchChars` cut the patch short; the file lists are always whole. */
  patchTruncated?: true;
  /** To "disk": the paths there that forkpoint cannot store (left out of the lists), with why; present when any. */
  skipped?: SkippedFile[];
}

/**
 * A path in a workspace that forkpoint cannot store, so leaves out of its snapshots (a rewind never writes nor deletes
 * it): a file it cannot read, one over the size limit, a FIFO, a socket, a device, a symbolic link, a name that is not
 * UTF-8 (shown with U+FFFD), a directory it cannot list.
 */
export interface SkippedFile {
  path: string;
  /** Why, as a phrase after the path: "is 20000000 bytes, over the limit of 16777216", "is a socket", ... */
  reason: string;
}

/** `diffFiles`' options. */
export interface DiffFilesOptions {
  /** false: the file lists only, no patch (no content is read). Default true. */
  patch?: boolean;
  /**
   * The patch's longest length in characters: it is cut by then (`patchTruncated`; a file's diff that cannot fit whole
   * is cut where the bound falls, or left out when computing it would go past the bound), so a long file rewritten
   * costs what the bound allows. Default: no bound.
   */
  maxPatchChars?: number;
}

/** What a move would do: the same fields as `MoveResult`, computed without doing anything. */
export interface MovePlan extends Omit<MoveResult, "branch"> {
  /** The branch the move would make current (for a rollback or edit: a description of the new branch). */
  branch: PlannedBranch;
  /** Entries of the current lineage that the move leaves behind (they stay on their branch). */
  leftBehind: Entry[];
  /**
   * With `scope: "files"` or `"both"`: the workspace files that differ from the move's target now, which the move gives
   * the target's content (`written`) or removes (`deleted`), by its restore or, with `"both"`, by the undos it runs
   * first (so its result may list fewer: those its undos already set right; and it may list more: a file an undo
   * puts back that the target has none of, which the restore then deletes again; what the calls in `replayed` write on
   * top is theirs, not listed); `kept` (present when any): those it leaves
   * as they are, the effect of an applied irreversible call its target's files do not hold, of a call a crash left of
   * unknown outcome (until `resolveToolCall` says what became of it), or a hand edit one of its undos puts back (its
   * call's run found it there); `mayKeep` (present when any): those the undo of a call recorded
   * with `recordToolCall` writes (as its arguments name them, before the restore), whose content is its tool's own,
   * which no one can tell before it runs, and those where the undo of a call applied by a replay may put back the hand
   * edit its first run found (had an earlier rewind put it back and the replay run over it): content no checkpoint keeps
   * (a hand edit made before that call, say) stays as it is (the result lists it in `kept`), anything else the restore
   * sets as the target has it. And those where an undo puts back a hand edit a checkpoint keeps over one an earlier undo
   * of the move put back that none keeps: it may still count as changed by hand, then stays as it is (`kept`).
   */
  files?: { written: string[]; deleted: string[]; kept?: string[]; mayKeep?: string[] };
  /**
   * With `scope: "files"` or `"both"`: the workspace files changed outside forkpoint since it last saw them. The move
   * refuses them (`WORKSPACE_DRIFT`), or with `force: true` saves them in a checkpoint first; `files` then says what its
   * restore would write and delete, from the directory as it is now. With `"conversation"`, for a session whose
   * workspace is on this host when the move undoes or replays calls: those of them its undos and replays write (a save
   * by hand after the call that wrote the file), refused or saved first the same way.
   */
  drift?: string[];
  /**
   * Why the move would not get through even with `force: true`: a link or a file forkpoint does not capture (a named
   * pipe, a file over `maxPayloadBytes`, a file the rules leave out now, changed since) in the way of its restore (scope
   * `"files"` or `"both"`) or where its undos and replays write (any scope: no checkpoint could keep it), which refuses
   * it before its first step; or a hand edit one of its undos puts back (not a deletion: nothing there to lose) that one of its replays writes over (any scope):
   * the move runs its undos, then stops before that replay with the hand edit on disk (`WORKSPACE_DRIFT`; the session
   * stays on its branch, and a checkpoint taken then keeps the edit, after which the move called again goes on); or a
   * hand edit one of its undos puts back inside a folder its restore writes as a file, or under a file where it needs
   * a folder (refused before its first step); or,
   * until it ends, a tool call of the session that another process or server runs now (`CALL_IN_PROGRESS`, refused;
   * that call is not counted in `unknown`); or a move of the session under way elsewhere (refused `MOVE_IN_PROGRESS` until
   * it ends), or one stopped midway that `plan` could not finish first (its tools not registered
   * here, a read-only handle): either changes what the plan is of.
   */
  blocked?: string;
  /**
   * Why the move may stop partway, forced or not (`WORKSPACE_DRIFT`, with what it found on disk), which no one can tell
   * before it runs: the undo of a call recorded with `recordToolCall` writes a file that a later step of the move (an
   * older call's undo, or a replay) writes next. What that undo puts back is its tool's own, not recorded by forkpoint:
   * other than what the later step's call left there and kept in no checkpoint (a change made by hand before the
   * recorded call), the move stops before that step; a checkpoint taken then keeps it, and the move called again goes on.
   * Or, with `"both"`: a hand edit an undo puts back that a replay writes over, where such a recorded call's undo wrote
   * that file first (it may have put back just that hand edit: then nothing is put back, and the move goes on); or a
   * hand edit made after such a recorded call, kept in no checkpoint, that an undo puts back and that recorded call's
   * undo then writes over: over content no checkpoint keeps, that undo fails (`UNDO_FAILED`) with the hand edit on
   * disk. Or a file such a recorded call's undo writes that one of the move's replays may write next (a call with no
   * record of the files its run changed may write any): what the undo put back, kept in no checkpoint, counts as changed
   * while the move ran, and the move stops before that replay. Or a file the undo of a call applied by a replay may
   * put back the hand edit of (its first run found one there; see `files.mayKeep`) that a replay of the move writes
   * next: when it does, the move stops before that replay. Or a file where a hand edit a checkpoint keeps is put back
   * over one no checkpoint keeps (see `files.mayKeep`) that a replay of the move writes next: when it still counts as
   * changed by hand, the move stops before that replay. Each place it may stop is named, joined by "; or".
   */
  mayStop?: string;
}

/** The target of a planned move. */
export interface PlannedBranch {
  /** The existing branch (switch), or null for the branch a rollback/edit would create. */
  id: string | null;
  parentId: string | null;
  forkPosition: number;
  /** The lineage position the world would be at. */
  position: number;
}

/** Result of `turn`: the messages appended and the checkpoint taken after them, in one transaction. */
export interface Turn {
  messages: Message[];
  checkpoint: Checkpoint;
}

/** Result of `edit`: the new branch and the new message, plus what moved in the world. */
export interface EditResult extends MoveResult {
  message: Message;
  /** The checkpoint asked for with `{ checkpoint }`, at the new message (written in the same transaction). */
  checkpoint?: Checkpoint;
}

/** What `edit` takes: a message whose role may be left out (the edited message's role is kept). */
export interface EditInput extends Omit<MessageInput, "role"> {
  role?: string;
}

/** What `regenerate` takes: a new answer (its role is the assistant's, as the message it replaces). */
export type RegenerateInput = Omit<MessageInput, "role">;

/** A message's `< index+1/count >` picker: the same as `versions()`, with the versions' branches in creation order. */
export interface MessageVersions {
  index: number;
  count: number;
  branchIds: string[];
}

/** A history message read with `withVersions: true`. */
export interface VersionedMessage extends Message {
  versions: MessageVersions;
}

/** The `< 2/3 >` versions of a message. */
export interface Versions {
  /** 0-based place of the queried message in `versions`. */
  index: number;
  count: number;
  versions: { branchId: string; message: Message }[];
}

/** Difference between two checkpoints. */
export interface CheckpointDiff {
  state: {
    added: { path: string[]; value: JsonValue }[];
    removed: { path: string[]; value: JsonValue }[];
    changed: { path: string[]; from: JsonValue; to: JsonValue }[];
  };
  messages: { common: number; onlyA: Message[]; onlyB: Message[] };
  tools: { common: number; onlyA: ToolInvocation[]; onlyB: ToolInvocation[] };
}

/** One event of a session's timeline. */
export interface TimelineItem {
  kind: "message" | "state" | "tool" | "checkpoint" | "branch" | "switch" | "undo" | "redo" | "checkpoint-deleted" | "handoff";
  /** The id of the entry, checkpoint or branch. */
  id: string;
  branchId: string;
  at: Date;
  /** A short human-readable description. */
  summary: string;
}
