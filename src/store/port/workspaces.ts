// Workspaces: a session's attached directory and its stat cache, file contents (content-addressed, in compressed packs),
// snapshots as trees of hashed directories, and checkpoints' files.
import type { Step } from "./unit.js";

/** A session's attached workspace. */
export interface WorkspaceRow {
  sessionId: string;
  dir: string;
  /** JSON array of .gitignore-style patterns. */
  exclude: string;
  /** Whether the directory's own .gitignore files are honoured (false for workspaces attached before they were). */
  gitignore: boolean;
  /** The files as forkpoint last saw or wrote them. */
  manifestId: number;
  /** While a move rewrites the directory: its JSON journal (see the schema). */
  restoring?: string | null;
  updatedAt: number;
  /** The host that attached it (its directory is on that host); null for workspaces attached before hosts were recorded. */
  host: string | null;
}

/** The files a checkpoint captured, and the directory and ignore rules they were read under. */
export interface CheckpointFilesRow {
  manifestId: number;
  dir: string;
  exclude: string;
  gitignore: boolean;
  /**
   * The lineage's calls that were not applied when the files were read (JSON array of entry ids); null or absent:
   * every one was. It may end with `{ "held": [ids] }`: the calls off the lineage applied then (the files hold them).
   */
  unapplied?: string | null;
  /**
   * The lineage's calls whose undo or replay a crash had interrupted when the files were read (JSON array of entry
   * ids); null or absent: none.
   */
  unknown?: string | null;
}

/** A checkpoint's record of the calls its files hold or may not hold (see `CheckpointFilesRow`). */
export interface CheckpointCallsRow {
  checkpointId: string;
  unapplied: string | null;
  unknown: string | null;
}

/** A snapshot: `root` (its root tree's hash) or, for snapshots stored before trees, `body` (`{ path: hash }` JSON). */
export interface ManifestRow {
  hash: string;
  body: string;
  root: string | null;
}

/** Where a stored content is: in `content` itself (`packId` null), or bytes `[packOffset, packOffset + size)` of a pack. */
export interface BlobRow {
  hash: string;
  content: Buffer;
  packId: number | null;
  packOffset: number | null;
  size: number | null;
}

/** Contents compressed together. */
export interface PackRow {
  id: number;
  codec: string;
  content: Buffer;
}

/** A directory of a snapshot, addressed by the SHA-256 of its body. */
export interface TreeRow {
  hash: string;
  body: string;
}

/** One directory's entries in a workspace's stat cache (see the schema). */
export interface StatRow {
  dir: string;
  body: Buffer;
}

export interface WorkspacesTx {
  getWorkspace(sessionId: string): Step<WorkspaceRow | undefined>;
  /** Attaches (or re-attaches) the session's workspace, clears its stat cache, and marks the session as having one. */
  putWorkspace(row: WorkspaceRow): Step<void>;
  /** Records the files as forkpoint last saw or wrote them. */
  setWorkspaceManifest(sessionId: string, manifestId: number, at: number): Step<void>;
  /** Journals (or clears, with null) a restore of the workspace's directory in progress. */
  setWorkspaceRestoring(sessionId: string, restoring: string | null): Step<void>;
  /** Replaces the restore journal only if it still is `expected` (one process takes an interrupted restore over). */
  claimWorkspaceRestore(sessionId: string, expected: string, next: string): Step<boolean>;
  /** Workspaces whose directory a move was rewriting when its process stopped (or still is). */
  restoringWorkspaces(): Step<WorkspaceRow[]>;

  /** Stores a file's content under its hash, as it is (once). */
  insertBlob(hash: string, content: Buffer): Step<void>;
  /** The rows of those of `hashes` that are stored (any order). */
  blobRows(hashes: readonly string[]): Step<BlobRow[]>;
  /** Those of `hashes` that are stored (any order). */
  presentBlobs(hashes: readonly string[]): Step<string[]>;
  /** Stores a pack and the contents it holds (a content already stored keeps its row); returns the pack's id. */
  insertPack(codec: string, content: Buffer, blobs: readonly { hash: string; offset: number; size: number }[]): Step<number>;
  getPacks(ids: readonly number[]): Step<PackRow[]>;
  /** The trees among `hashes` that are stored (any order). */
  getTrees(hashes: readonly string[]): Step<TreeRow[]>;
  /** Stores trees (each once). */
  insertTrees(rows: readonly TreeRow[]): Step<void>;
  /** The id of the manifest stored under `hash`, if any. */
  manifestId(hash: string): Step<number | undefined>;
  /** The id of the manifest stored under `hash`, stored now if it is not. */
  putManifest(hash: string, body: string, root: string | null): Step<number>;
  getManifest(id: number): Step<ManifestRow | undefined>;
  insertCheckpointFiles(row: CheckpointFilesRow & { checkpointId: string }): Step<void>;
  /** The session's checkpoints with files whose `unknown` may name invocation `entryId` (a superset: check each). */
  checkpointsAwaiting(sessionId: string, entryId: string): Step<CheckpointCallsRow[]>;
  /** Rewrites a checkpoint's record of the calls its files hold (a call of unknown outcome resolved). */
  setCheckpointCalls(row: CheckpointCallsRow): Step<void>;
  /** The files a checkpoint captured (none when it was taken without a workspace). */
  checkpointManifest(checkpointId: string): Step<CheckpointFilesRow | undefined>;
  /** The distinct snapshots the session's checkpoints captured (any order). */
  sessionManifests(sessionId: string): Step<number[]>;
  /** The files of the newest checkpoint with files on `branchId` with `from <= position <= upTo`. */
  lastCheckpointFiles(branchId: string, from: number, upTo: number): Step<CheckpointFilesRow | undefined>;
  /** The session's stat cache, one row per directory. */
  workspaceStats(sessionId: string): Step<StatRow[]>;
  /** Replaces the stat cache's rows of `rows`' directories, and deletes those of `deleted`. */
  putWorkspaceStats(sessionId: string, rows: readonly StatRow[], deleted: readonly string[]): Step<void>;
  /**
   * Deletes file manifests no checkpoint or workspace holds, trees no manifest reaches, contents no manifest or tree
   * holds, and packs no content is in; returns how many.
   */
  deleteUnreferencedFiles(): Step<number>;
}
