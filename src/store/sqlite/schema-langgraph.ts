// The tables of LangGraph's ForkpointSaver (forkpoint/langgraph), part of the schema drizzle-kit reads through schema.ts.
import { blob, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { checkpoints, sessions } from "./schema.js";

/**
 * LangGraph threads (`ForkpointSaver`): each (thread, namespace) of a user is one forkpoint session. `start_checkpoint_id`
 * marks its empty start, where a checkpoint put without a parent forks from.
 */
export const lgThreads = sqliteTable(
  "lg_threads",
  {
    userId: text("user_id").notNull(),
    threadId: text("thread_id").notNull(),
    checkpointNs: text("checkpoint_ns").notNull(),
    sessionId: text("session_id")
      .notNull()
      .references(() => sessions.id),
    startCheckpointId: text("start_checkpoint_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.threadId, t.checkpointNs] }), uniqueIndex("lg_threads_session").on(t.sessionId)],
);

/**
 * LangGraph checkpoints: the serialized checkpoint without its channel values, which live in the forkpoint checkpoint
 * (the messages channel, as the branch's messages) and in `lg_blobs` (every other channel, by version).
 */
export const lgCheckpoints = sqliteTable(
  "lg_checkpoints",
  {
    sessionId: text("session_id").notNull(),
    checkpointId: text("checkpoint_id").notNull(),
    parentCheckpointId: text("parent_checkpoint_id"),
    fpCheckpointId: text("fp_checkpoint_id")
      .notNull()
      .references(() => checkpoints.id),
    type: text("type").notNull(),
    checkpoint: blob("checkpoint", { mode: "buffer" }).notNull(),
    metadataType: text("metadata_type").notNull(),
    metadata: blob("metadata", { mode: "buffer" }).notNull(),
    /** JSON of the messages channel's version that the forkpoint checkpoint's messages are (null: none are). */
    messagesVersion: text("messages_version"),
  },
  // The foreign key's child column: deleting a forkpoint checkpoint (deleteSession, prune) checks it by this index.
  (t) => [primaryKey({ columns: [t.sessionId, t.checkpointId] }), index("lg_checkpoints_fp_checkpoint").on(t.fpCheckpointId)],
);

/** LangGraph channel values other than the mirrored messages, once per (channel, version) of a thread. */
export const lgBlobs = sqliteTable(
  "lg_blobs",
  {
    sessionId: text("session_id").notNull(),
    channel: text("channel").notNull(),
    /** JSON of the version (a number or a string). */
    version: text("version").notNull(),
    type: text("type").notNull(),
    value: blob("value", { mode: "buffer" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.channel, t.version] })],
);

/** LangGraph pending writes: what a task wrote after a checkpoint, before the next one. */
export const lgWrites = sqliteTable(
  "lg_writes",
  {
    sessionId: text("session_id").notNull(),
    checkpointId: text("checkpoint_id").notNull(),
    taskId: text("task_id").notNull(),
    idx: integer("idx").notNull(),
    channel: text("channel").notNull(),
    type: text("type").notNull(),
    value: blob("value", { mode: "buffer" }).notNull(),
    taskPath: text("task_path").notNull().default(""),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.checkpointId, t.taskId, t.idx] })],
);
