// The tables of attached workspaces (snapshots, their trees and contents, the stat cache, the calls a files restore set
// aside), part of the schema drizzle-kit reads through schema.ts.
import { boolean, index, integer, pgTable, primaryKey, uniqueIndex } from "drizzle-orm/pg-core";
import { bytea, seq, text, time } from "./column-types.js";
import { checkpoints, entries, sessions } from "./schema.js";

/** A session's workspace: a directory whose files checkpoints capture and moves with scope "files"/"both" restore. */
export const workspaces = pgTable("workspaces", {
  sessionId: text("session_id")
    .primaryKey()
    .references(() => sessions.id),
  dir: text("dir").notNull(),
  /** JSON array of .gitignore-style patterns left out of snapshots. */
  exclude: text("exclude").notNull(),
  /** The files as forkpoint last saw or wrote them (attach, checkpoint, restore, tool call): what drift is measured from. */
  manifestId: seq("manifest_id").notNull(),
  /** Set while a move rewrites the directory, cleared with the new `manifest_id`: JSON `{ manifestId, pid, pidStart }`. */
  restoring: text("restoring"),
  updatedAt: time("updated_at").notNull(),
  /** The host that attached it: its directory is there, so only that host snapshots or rewrites it (null: not recorded). */
  host: text("host"),
  /** Whether the directory's own .gitignore files are honoured (workspaces attached before they were: false). */
  gitignore: boolean("gitignore").notNull().default(false),
});

/** A workspace's stat cache (git's index), per directory of the files it captures: see SQLite's schema. */
export const workspaceStats = pgTable(
  "workspace_stats",
  {
    sessionId: text("session_id")
      .notNull()
      .references(() => sessions.id),
    dir: text("dir").notNull(),
    body: bytea("body").notNull(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.dir] })],
);

/**
 * File contents, addressed by their SHA-256: stored once however many snapshots hold them. A content is `content`
 * itself, or bytes `[pack_offset, pack_offset + size)` of pack `pack_id`'s uncompressed content: see SQLite's schema.
 */
export const fileBlobs = pgTable("file_blobs", {
  hash: text("hash").primaryKey(),
  content: bytea("content").notNull(),
  packId: seq("pack_id"),
  packOffset: seq("pack_offset"),
  size: seq("size"),
});

/** Contents compressed together, `codec` saying how. */
export const filePacks = pgTable("file_packs", {
  id: seq("id").primaryKey().generatedByDefaultAsIdentity(),
  codec: text("codec").notNull(),
  content: bytea("content").notNull(),
});

/** A directory of a snapshot (git's tree object), addressed by its SHA-256: see SQLite's schema. */
export const fileTrees = pgTable("file_trees", { hash: text("hash").primaryKey(), body: text("body").notNull() });

/** A snapshot of a workspace: `root`, its root tree's hash; or, before trees (`root` null), `{ path: blob hash }` in `body`. */
export const fileManifests = pgTable(
  "file_manifests",
  {
    id: seq("id").primaryKey().generatedByDefaultAsIdentity(),
    hash: text("hash").notNull(),
    body: text("body").notNull(),
    root: text("root"),
  },
  (t) => [uniqueIndex("file_manifests_hash").on(t.hash)],
);

/** The workspace files a checkpoint captured. */
export const checkpointFiles = pgTable("checkpoint_files", {
  checkpointId: text("checkpoint_id")
    .primaryKey()
    .references(() => checkpoints.id),
  manifestId: seq("manifest_id").notNull(),
  /** The directory and ignore rules the files were read under: a snapshot is only restored to the same. */
  dir: text("dir").notNull(),
  exclude: text("exclude").notNull(),
  gitignore: boolean("gitignore").notNull().default(false),
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
export const setAside = pgTable(
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
    setAt: time("set_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.entryId, t.branchId] }), index("set_aside_session").on(t.sessionId)],
);
