// The PostgreSQL schema (drizzle pg-core), table by table the SQLite one's. drizzle-kit generates drizzle/postgres/ from it
// (and from the LangGraph and workspace tables it re-exports from schema-langgraph.ts and schema-workspaces.ts).
// Just over 450 lines: the core tables stay in one file, as the SQLite schema does, so the two read side by side.
import { sql } from "drizzle-orm";
import { boolean, index, integer, pgTable, primaryKey, unique, uniqueIndex } from "drizzle-orm/pg-core";
import { bytea, seq, text, time } from "./column-types.js";

export * from "./schema-langgraph.js";
export * from "./schema-workspaces.js";

/** External sessions: a user's conversation. `current_branch_id` is its only mutable pointer (like git's HEAD). */
export const sessions = pgTable(
  "sessions",
  {
    seq: seq("seq").primaryKey().generatedByDefaultAsIdentity(),
    id: text("id").notNull(),
    userId: text("user_id").notNull(),
    title: text("title"),
    metadata: text("metadata"),
    currentBranchId: text("current_branch_id").notNull(),
    originSessionId: text("origin_session_id"),
    originCheckpointId: text("origin_checkpoint_id"),
    /** Set once the session records its first tool call: moves of a session without tools skip the world. */
    hasTools: boolean("has_tools").notNull().default(false),
    /** Set by attachWorkspace: checkpoints of a session without one skip looking for its files. */
    hasWorkspace: boolean("has_workspace").notNull().default(false),
    /** The session's retention policy (JSON, see setRetention); null: checkpoints are kept until they expire. */
    retention: text("retention"),
    /** Retention has weighed every checkpoint made up to this time against `keepFor`: each ages out of it once. */
    retentionAgedAt: time("retention_aged_at").notNull().default(0),
    /**
     * Times never decrease along each timeline stream (a branch's entries by position, the session's checkpoints and
     * events by seq), so the timeline walks the indexes those already have. Sessions made before this column, and
     * imports of documents whose times go back, have it false: their timeline sorts by time instead.
     */
    /**
     * The session's move stack (undo and redo): the newest standing move (a branch id, for a move recorded on the branch
     * it made, or "m:<seq>" of move_history) and the undone ones, a JSON array whose last is the next to redo.
     */
    moveTop: text("move_top"),
    moveRedo: text("move_redo"),
    timesOrdered: boolean("times_ordered").notNull().default(false),
    createdAt: time("created_at").notNull(),
    updatedAt: time("updated_at").notNull(),
  },
  // A constraint, not a unique index, for every id a foreign key names: drizzle-kit adds foreign keys before indexes.
  (t) => [unique("sessions_id").on(t.id), index("sessions_user_seq").on(t.userId, t.seq)],
);

/** Internal sessions (branches): a parent pointer and a fork position; no history is copied. */
export const branches = pgTable(
  "branches",
  {
    seq: seq("seq").primaryKey().generatedByDefaultAsIdentity(),
    id: text("id").notNull(),
    sessionId: text("session_id")
      .notNull()
      .references(() => sessions.id),
    parentId: text("parent_id"),
    forkCheckpointId: text("fork_checkpoint_id"),
    forkPosition: integer("fork_position").notNull(),
    /** The entry at `fork_position` in the parent's lineage (null at position 0): the new branch's base. */
    forkEntryId: text("fork_entry_id"),
    name: text("name"),
    reason: text("reason").notNull(),
    createdAt: time("created_at").notNull(),
    /**
     * Set on a branch a move (rollback, edit) made: that move, as undo and redo read it. Kept on the row the move writes
     * anyway, so recording it costs no page of its own; `move_prev` is the move below it on the session's stack.
     */
    moveKind: text("move_kind"),
    moveFromBranchId: text("move_from_branch_id"),
    moveFromPosition: integer("move_from_position"),
    moveToPosition: integer("move_to_position"),
    /**
     * Where the move went when not this branch: the branch the session was on when the move was undone, a failed
     * guarded block's rollback having moved it off this one (redo goes back there). Null: this branch.
     */
    moveToBranchId: text("move_to_branch_id"),
    movePrev: text("move_prev"),
    /**
     * Set on the branch a failed guarded block (atomic) wrote on: the branch its rollback made, which continues this one
     * while this one's head is still at `continued_at` (its position when the block failed; nobody wrote on it since).
     */
    continuedBy: text("continued_by"),
    continuedAt: integer("continued_at"),
    /**
     * With `continued_by`, this branch's head when the block first wrote on it: what the block wrote here comes after it.
     * Null for the branch the block ran on (its rollback's branch forks there) and in rows written before this column.
     */
    continuedFrom: integer("continued_from"),
  },
  (t) => [
    unique("branches_id").on(t.id),
    // A message's versions are the branches forked at the entry before it: found without scanning the session's branches.
    // Its prefix serves every read by session, so no index of session_id alone costs a page on each fork.
    index("branches_session_fork_entry").on(t.sessionId, t.forkEntryId),
  ],
);

/** The append-only log of every branch: messages, state changes and tool invocations, hash-chained. */
export const entries = pgTable(
  "entries",
  {
    seq: seq("seq").primaryKey().generatedByDefaultAsIdentity(),
    id: text("id").notNull(),
    branchId: text("branch_id")
      .notNull()
      .references(() => branches.id),
    position: integer("position").notNull(),
    /** "message" | "state" | "tool" */
    kind: text("kind").notNull(),
    role: text("role"),
    /** JSON text: a message's content, or a tool invocation's args (text, not jsonb: it is hashed as written). */
    content: text("content"),
    tool: text("tool"),
    callId: text("call_id"),
    /** Tool entries: whether the tool had an `undo` when journaled; null when not known. */
    reversible: boolean("reversible"),
    clientId: text("client_id"),
    metadata: text("metadata"),
    /** The state snapshot in effect after this entry (null: the empty state `{}`). */
    stateId: seq("state_id"),
    /** Number of messages in the lineage up to and including this entry. */
    msgCount: integer("msg_count").notNull(),
    /** SHA-256 chain: hash(previous entry's hash, this entry's fields). 32 bytes, hex to the engine. */
    hash: bytea("hash").notNull(),
    createdAt: time("created_at").notNull(),
  },
  (t) => [
    unique("entries_id").on(t.id),
    uniqueIndex("entries_branch_position").on(t.branchId, t.position),
    // Tool calls are few among many messages: moves find them without scanning the log.
    index("entries_branch_tools")
      .on(t.branchId, t.position)
      .where(sql`kind = 'tool'`),
  ],
);

/** A tool invocation's completion: written once, when it ends. No row means it is still running (or died running). */
export const toolResults = pgTable("tool_results", {
  entryId: text("entry_id")
    .primaryKey()
    .references(() => entries.id),
  /** "succeeded" | "failed" */
  status: text("status").notNull(),
  result: text("result"),
  error: text("error"),
  hash: text("hash").notNull(),
  completedAt: time("completed_at").notNull(),
  /**
   * A call recorded with `recordToolCall` on a session with a workspace: the files at the paths its arguments name, and
   * under them, as it was recorded (JSON `{ path: file id | null }`, null: no file; `"*"`: a folder too big to list,
   * whose drifted files alone are; see `recordedFiles`). Its undo writes
   * there: a file changed since is drift a "conversation" move refuses. Null: none named, or not recorded (older rows).
   */
  namedFiles: text("named_files"),
});

/** Content-addressed state documents: identical states (of the same schema version) are stored once. */
export const stateSnapshots = pgTable(
  "state_snapshots",
  {
    id: seq("id").primaryKey().generatedByDefaultAsIdentity(),
    hash: text("hash").notNull(),
    body: text("body").notNull(),
    /** The state schema version the body was written under (`openForkpoint`'s `stateVersion`); 1 before versions existed. */
    version: integer("version").notNull().default(1),
  },
  (t) => [uniqueIndex("state_snapshots_hash").on(t.hash)],
);

/** Checkpoints: immutable named points (branch + position); their content is the lineage, materialized on read. */
export const checkpoints = pgTable(
  "checkpoints",
  {
    // An identity: it only grows (a deleted checkpoint's seq is never handed out again), across every server.
    seq: seq("seq").primaryKey().generatedByDefaultAsIdentity(),
    id: text("id").notNull(),
    sessionId: text("session_id")
      .notNull()
      .references(() => sessions.id),
    branchId: text("branch_id")
      .notNull()
      .references(() => branches.id),
    position: integer("position").notNull(),
    name: text("name"),
    auto: boolean("auto").notNull(),
    metadata: text("metadata"),
    userId: text("user_id").notNull(),
    stateId: seq("state_id"),
    /** Hash of the entry chain up to `position`. */
    headHash: text("head_hash").notNull(),
    checksum: text("checksum").notNull(),
    createdAt: time("created_at").notNull(),
    expiresAt: time("expires_at"),
    /** Made while its session had a retention policy (or marked when one was set): only these are in retention's time index. */
    weighed: boolean("weighed").notNull().default(false),
    /**
     * The request id of the turn (or checkpoint()) that made it, kept on its row rather than in \`requests\`: a turn's
     * ledger record then costs one index entry, not a row and an index entry. Kept as long as the checkpoint.
     */
    requestId: text("request_id"),
    /** That request's fingerprint and answer, as \`requests\` keeps them (the checkpoint itself is the rest of it). */
    requestFingerprint: text("request_fingerprint"),
    requestAnswer: text("request_answer"),
  },
  (t) => [
    unique("checkpoints_id").on(t.id),
    // SQLite's covers every listed column; a PostgreSQL btree entry must stay under ~2.7 kB, which a checkpoint's
    // name and metadata do not promise: the listing reads the table by this index instead.
    index("checkpoints_user_listing").on(t.userId, t.seq),
    // One session's checkpoints in order (its user checked alongside); session first, so that it also serves the
    // foreign key to sessions (deleting a session checks it).
    index("checkpoints_session_user_seq").on(t.sessionId, t.userId, t.seq),
    // Retention (one per name) finds the newest checkpoint of a name without reading the others. Partial: a session
    // without a policy (most of them) writes no entry of it on each checkpoint.
    index("checkpoints_session_name_seq")
      .on(t.sessionId, t.name, t.seq)
      .where(sql`weighed`),
    // The foreign key to branches: deleting a branch checks it, which without an index is a scan of every user's
    // checkpoints per deleted branch (deleteSession of a branchy session took seconds). With seq, as SQLite's rowid
    // makes it there: a branch's newest are read from its end (retention, the tree view).
    index("checkpoints_branch").on(t.branchId, t.seq),
    // A session applies a request id once: partial, so a checkpoint without one (most of them) writes no entry of it.
    uniqueIndex("checkpoints_request")
      .on(t.sessionId, t.requestId)
      .where(sql`request_id IS NOT NULL`),
    // Retention's keepFor reads the checkpoints that aged out since it last looked, by time. Partial: the timeline walks
    // checkpoints by seq, so a session without a policy writes no entry of it.
    index("checkpoints_session_weighed_created")
      .on(t.sessionId, t.createdAt, t.seq)
      .where(sql`weighed`),
    // Retention keeps the last N of each branch, manual ones before automatic ones: each kind's newest of a branch
    // without reading the other kind's. Partial, as the name index.
    index("checkpoints_branch_kind_seq")
      .on(t.branchId, t.auto, t.seq)
      .where(sql`weighed`),
    index("checkpoints_expires")
      .on(t.expiresAt)
      .where(sql`expires_at IS NOT NULL`),
  ],
);

/** Checkpoints a guarded block holds while it runs (see SQLite's schema): `until` is by the database's clock. */
export const checkpointHolds = pgTable(
  "checkpoint_holds",
  { checkpointId: text("checkpoint_id").primaryKey(), sessionId: text("session_id").notNull(), until: time("until").notNull() },
  (t) => [index("checkpoint_holds_session").on(t.sessionId)],
);

/**
 * The top-level scalar metadata of checkpoints, one row per key: `listCheckpoints({ metadata })` reads a user's
 * checkpoints with a key equal to a value from this index, newest first, instead of scanning them all. `value` is the
 * value's JSON text, so "1" and 1 differ.
 */
export const checkpointMetadata = pgTable(
  "checkpoint_metadata",
  { cpUser: text("cp_user").notNull(), key: text("key").notNull(), value: text("value").notNull(), cpSeq: seq("cp_seq").notNull() },
  (t) => [primaryKey({ columns: [t.cpUser, t.key, t.value, t.cpSeq] }), index("checkpoint_metadata_seq").on(t.cpSeq)],
);

/** Session events that are not entries (branch created, switch, checkpoint deleted, moves): the timeline's other half. */
export const events = pgTable(
  "events",
  {
    seq: seq("seq").primaryKey().generatedByDefaultAsIdentity(),
    sessionId: text("session_id").notNull(),
    kind: text("kind").notNull(),
    refId: text("ref_id").notNull(),
    branchId: text("branch_id").notNull(),
    detail: text("detail"),
    createdAt: time("created_at").notNull(),
  },
  // The timeline reads a session's events newest first from here: their times never decrease along seq.
  (t) => [index("events_session_seq").on(t.sessionId, t.seq)],
);

/** Tool calls written by `importSession`: they ran in another world, so no move of this database ever replays them. */
export const importedCalls = pgTable(
  "imported_calls",
  {
    entryId: text("entry_id")
      .primaryKey()
      .references(() => entries.id),
    sessionId: text("session_id").notNull(),
  },
  (t) => [index("imported_calls_session").on(t.sessionId)],
);

/**
 * Who runs each call `invoke` journaled, while it runs: written with the call, deleted with its completion, so that a
 * move on another server refuses while the owner's lease holds. A running call without a row (recorded before owners
 * were kept) has no owner: its outcome is unknown.
 */
export const runningCalls = pgTable(
  "running_calls",
  {
    entryId: text("entry_id")
      .primaryKey()
      .references(() => entries.id),
    sessionId: text("session_id").notNull(),
    pid: integer("pid").notNull(),
    /** The owner's identity beyond its pid (host, boot, start time, thread). */
    pidStart: text("pid_start"),
    /** Until when the owner's lease holds (ms, by the database's clock): renewed while the call runs. */
    leaseUntil: time("lease_until").notNull(),
  },
  (t) => [index("running_calls_session").on(t.sessionId)],
);

/** The world: which invocations' effects are applied now, with the result of their latest application. */
export const applied = pgTable(
  "applied",
  {
    entryId: text("entry_id")
      .primaryKey()
      .references(() => entries.id),
    sessionId: text("session_id").notNull(),
    result: text("result"),
    /** Order of application: undo runs in reverse of it. From a sequence: servers never hand out the same. */
    appliedSeq: seq("applied_seq").notNull().generatedByDefaultAsIdentity(),
    appliedAt: time("applied_at").notNull(),
  },
  (t) => [index("applied_session_seq").on(t.sessionId, t.appliedSeq)],
);

/**
 * The result of each application of an invocation by a replay (a replay that finished, one a crash interrupted that
 * `resolveToolCall` says succeeded, or a move's marking it applied again with that replay's result), kept past `prune`
 * of the move that journaled it: a snapshot names the application its files hold, and a move that restores them marks
 * the invocation applied again with that application's result. One world's knowledge: not exported, imported or cloned.
 */
export const replayResults = pgTable(
  "replay_results",
  {
    entryId: text("entry_id")
      .notNull()
      .references(() => entries.id),
    sessionId: text("session_id").notNull(),
    /** The application (`applied.applied_seq`) this result is of; 0 for one kept before applications were named. */
    appliedSeq: seq("applied_seq").notNull(),
    result: text("result"),
    replayedAt: time("replayed_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.entryId, t.appliedSeq] }), index("replay_results_session").on(t.sessionId)],
);

/**
 * The workspace paths each `invoke` changed while it ran (JSON array of paths, relative to the workspace; `[]`: it changed
 * none), as its run's scan found them. Calls without a row (recorded before it was kept, or run without a local
 * workspace) are inferred from the snapshots around them. One world's knowledge: not exported, imported or cloned.
 */
export const callPaths = pgTable(
  "call_paths",
  {
    entryId: text("entry_id")
      .primaryKey()
      .references(() => entries.id),
    sessionId: text("session_id").notNull(),
    paths: text("paths").notNull(),
    /**
     * What the run left in those paths, as forkpoint made it known: JSON `{ path: file id | null }` (null: deleted); a
     * path whose content stayed drift is not in it. Null: not recorded (older rows). A move takes a call the world
     * shares with its target from here, not from what a branch changed since (see `keptTarget`). A run that changed
     * no file (`paths` `[]`): what it found at the paths its arguments name and under them (see `withNamedFiles`).
     */
    outputs: text("outputs"),
    /** Those of `paths` that held a hand edit as the call began (JSON array; null: none, or not recorded). */
    handEdited: text("hand_edited"),
    /**
     * What the run found and left in those (JSON `{ path: [found file id, left file id] }`, null: no file; null: none,
     * or not recorded (older rows)): a move tells the call's own output from a save made after it by this.
     */
    handEditIds: text("hand_edit_ids"),
  },
  (t) => [index("call_paths_session").on(t.sessionId)],
);

/**
 * The request ledger: the request ids each session applied (a write given `requestId`), recorded in the write's own
 * transaction, so a retry with the same id answers from here instead of writing again. Kept while the session is.
 */
export const requests = pgTable(
  "requests",
  {
    sessionId: text("session_id").notNull(),
    requestId: text("request_id").notNull(),
    /** SHA-256 of the verb and its arguments: the same id with other arguments is refused. */
    fingerprint: text("fingerprint").notNull(),
    /** The first call's answer as its verb encodes it (JSON: ids and positions where it can be read back). */
    answer: text("answer").notNull(),
    createdAt: time("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.requestId] })],
);

/** The move journal: one row per rollback/edit/switch that moves the world. */
export const moves = pgTable(
  "moves",
  {
    seq: seq("seq").primaryKey().generatedByDefaultAsIdentity(),
    id: text("id").notNull(),
    sessionId: text("session_id").notNull(),
    /** "rollback" | "edit" | "switch" */
    kind: text("kind").notNull(),
    /** JSON: everything needed to finish the move after a crash (target, new branch id, edited message, options). */
    spec: text("spec").notNull(),
    /** "running" | "done" | "failed" */
    status: text("status").notNull(),
    pid: integer("pid").notNull(),
    /** The owner's identity beyond its pid (host, boot, start time), so a reused pid is not taken for it. */
    pidStart: text("pid_start"),
    /** Until when the owner's lease holds (ms): past it, another server may take the move over. */
    leaseUntil: time("lease_until"),
    createdAt: time("created_at").notNull(),
    finishedAt: time("finished_at"),
  },
  (t) => [
    uniqueIndex("moves_id").on(t.id),
    index("moves_status").on(t.status),
    index("moves_session").on(t.sessionId),
    // Every write on a session's current branch asks whether a move of it is unfinished: a probe of the few running.
    index("moves_running")
      .on(t.sessionId)
      .where(sql`status = 'running'`),
  ],
);

/**
 * The session's moves that made no branch (switches), for `undo` and `redo`: where each left from and went to, and the
 * move below it on the session's stack (`sessions.move_top`). Rollbacks and edits are recorded on the branch they make.
 * Undo and redo are not rows; a move deletes the rows it leaves nothing to redo of.
 */
export const moveHistory = pgTable(
  "move_history",
  {
    seq: seq("seq").primaryKey().generatedByDefaultAsIdentity(),
    sessionId: text("session_id").notNull(),
    /** "rollback" | "edit" | "switch" */
    kind: text("kind").notNull(),
    fromBranchId: text("from_branch_id").notNull(),
    fromPosition: integer("from_position").notNull(),
    toBranchId: text("to_branch_id").notNull(),
    toPosition: integer("to_position").notNull(),
    /** The move below this one on the session's stack (see sessions.move_top); null at the bottom. */
    prev: text("prev"),
    /** Before sessions.move_redo: set while the move was undone (read once, by the migration to the stack). */
    undoneAt: time("undone_at"),
    createdAt: time("created_at").notNull(),
  },
  (t) => [index("move_history_session_seq").on(t.sessionId, t.seq)],
);

/** The steps of a move, in order. */
export const moveSteps = pgTable(
  "move_steps",
  {
    moveId: text("move_id").notNull(),
    idx: integer("idx").notNull(),
    /** "undo" | "replay" */
    op: text("op").notNull(),
    entryId: text("entry_id").notNull(),
    /** "pending" | "running" | "done" | "failed" | "unknown" */
    status: text("status").notNull(),
    result: text("result"),
    error: text("error"),
  },
  (t) => [primaryKey({ columns: [t.moveId, t.idx] })],
);
