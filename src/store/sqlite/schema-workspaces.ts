// The tables of attached workspaces (snapshots, their trees and contents, the stat cache, the calls a files restore set
// aside), part of the schema drizzle-kit reads through schema.ts.
import { blob, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { checkpoints, entries, sessions } from "./schema.js";

/** A session's workspace: a directory whose files checkpoints capture and moves with scope "files"/"both" restore. */
export const workspaces = sqliteTable("workspaces", {
  sessionId: text("session_id")
    .primaryKey()
    .references(() => sessions.id),
  dir: text("dir").notNull(),
  /** JSON array of .gitignore-style patterns left out of snapshots. */
  exclude: text("exclude").notNull(),
  /** The files as forkpoint last saw or wrote them (attach, checkpoint, restore, tool call): what drift is measured from. */
  manifestId: integer("manifest_id").notNull(),
  /**
   * Set while a move rewrites the directory, cleared with the new `manifest_id`: JSON `{ manifestId, pid, pidStart }`,
   * the target and who writes it. Found set after a crash, the restore is finished on recovery.
   */
  restoring: text("restoring"),
  updatedAt: integer("updated_at").notNull(),
  /** The host that attached it: its directory is there, so only that host snapshots or rewrites it (null: not recorded). */
  host: text("host"),
  /** Whether the directory's own .gitignore files are honoured (workspaces attached before they were: false). */
  gitignore: integer("gitignore", { mode: "boolean" }).notNull().default(false),
});

/**
 * A workspace's stat cache (git's index): per directory of the files it captures, each file's size, mtime and ctime
 * (ns), inode, mode and content hash when last read. A file whose stat data still match is not read again.
 * `body`: the directory's files, packed (see stat-cache.ts).
 */
export const workspaceStats = sqliteTable(
  "workspace_stats",
  {
    sessionId: text("session_id")
      .notNull()
      .references(() => sessions.id),
    dir: text("dir").notNull(),
    body: blob("body", { mode: "buffer" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.dir] })],
);

/**
 * File contents, addressed by their SHA-256: stored once however many snapshots hold them. A content is `content`
 * itself (small files, and all those stored before packs), or bytes `[pack_offset, pack_offset + size)` of pack
 * `pack_id`'s uncompressed content (`content` then empty).
 */
export const fileBlobs = sqliteTable("file_blobs", {
  hash: text("hash").primaryKey(),
  content: blob("content", { mode: "buffer" }).notNull(),
  packId: integer("pack_id"),
  packOffset: integer("pack_offset"),
  size: integer("size"),
});

/** Contents compressed together (files compress better beside their neighbours than alone), `codec` saying how. */
export const filePacks = sqliteTable("file_packs", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  codec: text("codec").notNull(),
  content: blob("content", { mode: "buffer" }).notNull(),
});

/**
 * A directory of a snapshot (git's tree object): canonical JSON `[[name, hash], ...]` sorted by name, where a file's
 * hash is its content's and a subdirectory's name ends with "/" and its hash is its tree's; addressed by its SHA-256.
 * Snapshots share every directory they have in common.
 */
export const fileTrees = sqliteTable("file_trees", { hash: text("hash").primaryKey(), body: text("body").notNull() });

/**
 * A snapshot of a workspace: `root`, the hash of its root tree (`hash` is the same, `body` "{}"); or, for snapshots
 * stored before trees (`root` null), canonical JSON `{ path: blob hash }` in `body`, addressed by its own hash.
 */
export const fileManifests = sqliteTable(
  "file_manifests",
  { id: integer("id").primaryKey({ autoIncrement: true }), hash: text("hash").notNull(), body: text("body").notNull(), root: text("root") },
  (t) => [uniqueIndex("file_manifests_hash").on(t.hash)],
);

/** The workspace files a checkpoint captured. */
export const checkpointFiles = sqliteTable("checkpoint_files", {
  checkpointId: text("checkpoint_id")
    .primaryKey()
    .references(() => checkpoints.id),
  manifestId: integer("manifest_id").notNull(),
  /** The directory and ignore rules the files were read under: a snapshot is only restored to the same. */
  dir: text("dir").notNull(),
  exclude: text("exclude").notNull(),
  gitignore: integer("gitignore", { mode: "boolean" }).notNull().default(false),
  /**
   * The calls of the checkpoint's lineage (succeeded, not imported) that were not applied when the files were read
   * (a move stopped by a failing undo left them undone): a JSON array of their entry ids. Null: every one was applied
   * (so rows written before this was kept keep their meaning). A move restoring the files replays them. The array may
   * end with an object `{ "held": [ids] }`: the calls off the lineage that were applied then, whose effects the files
   * hold (a move restoring them leaves those calls applied, or marks them so again).
   */
  unapplied: text("unapplied"),
  /**
   * The lineage's calls whose undo or replay a crash had interrupted when the files were read (reported unknown): a
   * JSON array of their entry ids, or null. Resolving such a call (`resolveToolCall`) moves it out of here, into
   * `unapplied` when the files then lacked its effect.
   */
  unknown: text("unknown"),
});

/**
 * The invocations a files-only restore took out of the world (unapplied: the restored files do not hold them) while
 * they stay in the conversation; an application clears the row. A snapshot read later records them so, and a move
 * that restores it leaves them unapplied rather than replaying them. One world's knowledge: not exported, imported or
 * cloned.
 */
export const setAside = sqliteTable(
  "set_aside",
  {
    entryId: text("entry_id")
      .notNull()
      .references(() => entries.id),
    sessionId: text("session_id").notNull(),
    /**
     * The branch the session was on when they were set aside: moves to lineages through it keep them out ("": a row
     * written before it was kept, out of every lineage). One row per call and branch: set aside on two, out of both.
     */
    branchId: text("branch_id").notNull().default(""),
    /**
     * That branch's head position then: a lineage forking from it before there keeps the call (null: a row written
     * before it was kept, kept out on every lineage through the branch).
     */
    position: integer("position"),
    setAt: integer("set_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.entryId, t.branchId] }), index("set_aside_session").on(t.sessionId)],
);
