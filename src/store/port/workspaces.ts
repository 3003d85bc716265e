// Workspaces: a session's attached directory, file contents and manifests (content-addressed), and checkpoints' files.
import type { Step } from "./unit.js";

/** A session's attached workspace. */
export interface WorkspaceRow {
  sessionId: string;
  dir: string;
  /** JSON array of .gitignore-style patterns. */
  exclude: string;
  /** The files as forkpoint last saw or wrote them. */
  manifestId: number;
  /** While a move rewrites the directory: its JSON journal (see the schema). */
  restoring?: string | null;
  updatedAt: number;
  /** The host that attached it (its directory is on that host); null for workspaces attached before hosts were recorded. */
  host: string | null;
}

/** The files a checkpoint captured, and the directory and exclude list they were read under. */
export interface CheckpointFilesRow {
  manifestId: number;
  dir: string;
  exclude: string;
}

export interface WorkspacesTx {
  getWorkspace(sessionId: string): Step<WorkspaceRow | undefined>;
  /** Attaches (or re-attaches) the session's workspace, and marks the session as having one. */
  putWorkspace(row: WorkspaceRow): Step<void>;
  /** Records the files as forkpoint last saw or wrote them. */
  setWorkspaceManifest(sessionId: string, manifestId: number, at: number): Step<void>;
  /** Journals (or clears, with null) a restore of the workspace's directory in progress. */
  setWorkspaceRestoring(sessionId: string, restoring: string | null): Step<void>;
  /** Replaces the restore journal only if it still is `expected` (one process takes an interrupted restore over). */
  claimWorkspaceRestore(sessionId: string, expected: string, next: string): Step<boolean>;
  /** Workspaces whose directory a move was rewriting when its process stopped (or still is). */
  restoringWorkspaces(): Step<WorkspaceRow[]>;

  /** Stores a file's content under its hash (once). */
  insertBlob(hash: string, content: Buffer): Step<void>;
  getBlob(hash: string): Step<Buffer | undefined>;
  /** The id of the manifest stored under `hash`, if any. */
  manifestId(hash: string): Step<number | undefined>;
  /** The id of the manifest stored under `hash`, stored now if it is not. */
  putManifest(hash: string, body: string): Step<number>;
  getManifest(id: number): Step<{ hash: string; body: string } | undefined>;
  insertCheckpointFiles(row: CheckpointFilesRow & { checkpointId: string }): Step<void>;
  /** The files a checkpoint captured (none when it was taken without a workspace). */
  checkpointManifest(checkpointId: string): Step<CheckpointFilesRow | undefined>;
  /** The files of the newest checkpoint with files on `branchId` with `from <= position <= upTo`. */
  lastCheckpointFiles(branchId: string, from: number, upTo: number): Step<CheckpointFilesRow | undefined>;
  /** Deletes file manifests no checkpoint or workspace holds, and contents no manifest holds; returns how many. */
  deleteUnreferencedFiles(): Step<number>;
}
