// Workspaces, file contents and manifests, and the files of checkpoints: SQLite's statements and the port's WorkspacesTx.
import type Database from "better-sqlite3";
import type { CheckpointFilesRow, WorkspaceRow, WorkspacesTx } from "../port/index.js";
import { WORKSPACE_COLS } from "./columns.js";
import { prepare, type RowMode } from "./object-rows.js";

export function workspacesTx(db: Database.Database): WorkspacesTx {
  const p = (sql: string, mode?: RowMode) => prepare(db, sql, mode);
  const s = {
    getWorkspace: p(`SELECT ${WORKSPACE_COLS} FROM workspaces WHERE session_id = ?`),
    putWorkspace:
      p(`INSERT INTO workspaces (session_id, dir, exclude, manifest_id, updated_at, host) VALUES (@sessionId, @dir, @exclude, @manifestId, @updatedAt, @host)
    ON CONFLICT (session_id) DO UPDATE SET dir = excluded.dir, exclude = excluded.exclude, manifest_id = excluded.manifest_id,
      restoring = NULL, updated_at = excluded.updated_at, host = excluded.host`),
    markHasWorkspace: p(`UPDATE sessions SET has_workspace = 1 WHERE id = ? AND has_workspace = 0`),
    setWorkspaceManifest: p(`UPDATE workspaces SET manifest_id = ?, updated_at = ? WHERE session_id = ?`),
    setWorkspaceRestoring: p(`UPDATE workspaces SET restoring = ? WHERE session_id = ?`),
    claimWorkspaceRestore: p(`UPDATE workspaces SET restoring = ? WHERE session_id = ? AND restoring = ?`),
    restoringWorkspaces: p(`SELECT ${WORKSPACE_COLS} FROM workspaces WHERE restoring IS NOT NULL`),
    insertBlob: p(`INSERT INTO file_blobs (hash, content) VALUES (?, ?) ON CONFLICT (hash) DO NOTHING`),
    getBlob: p(`SELECT content FROM file_blobs WHERE hash = ?`, "pluck"),
    manifestId: p(`SELECT id FROM file_manifests WHERE hash = ?`, "pluck"),
    insertManifest: p(`INSERT INTO file_manifests (hash, body) VALUES (?, ?)`),
    getManifest: p(`SELECT hash, body FROM file_manifests WHERE id = ?`),
    insertCheckpointFiles: p(
      `INSERT INTO checkpoint_files (checkpoint_id, manifest_id, dir, exclude) VALUES (@checkpointId, @manifestId, @dir, @exclude)`,
    ),
    checkpointManifest: p(`SELECT manifest_id AS manifestId, dir, exclude FROM checkpoint_files WHERE checkpoint_id = ?`),
    lastCheckpointFiles:
      p(`SELECT f.manifest_id AS manifestId, f.dir, f.exclude FROM checkpoints c JOIN checkpoint_files f ON f.checkpoint_id = c.id
    WHERE c.branch_id = ? AND c.position >= ? AND c.position <= ? ORDER BY c.position DESC, c.seq DESC LIMIT 1`),
    deleteUnreferencedManifests: p(`DELETE FROM file_manifests WHERE id NOT IN (SELECT manifest_id FROM checkpoint_files)
    AND id NOT IN (SELECT manifest_id FROM workspaces)
    AND id NOT IN (SELECT json_extract(restoring, '$.manifestId') FROM workspaces WHERE restoring IS NOT NULL)`),
    deleteUnreferencedBlobs: p(`DELETE FROM file_blobs WHERE hash NOT IN (SELECT j.value FROM file_manifests m, json_each(m.body) j)`),
  };
  return {
    *getWorkspace(sessionId: string) {
      return s.getWorkspace.get(sessionId) as WorkspaceRow | undefined;
    },
    *putWorkspace(row: WorkspaceRow) {
      s.putWorkspace.run(row);
      s.markHasWorkspace.run(row.sessionId);
    },
    *setWorkspaceManifest(sessionId: string, manifestId: number, at: number) {
      s.setWorkspaceManifest.run(manifestId, at, sessionId);
    },
    *setWorkspaceRestoring(sessionId: string, restoring: string | null) {
      s.setWorkspaceRestoring.run(restoring, sessionId);
    },
    *claimWorkspaceRestore(sessionId: string, expected: string, next: string) {
      return s.claimWorkspaceRestore.run(next, sessionId, expected).changes === 1;
    },
    *restoringWorkspaces() {
      return s.restoringWorkspaces.all() as WorkspaceRow[];
    },
    *insertBlob(hash: string, content: Buffer) {
      s.insertBlob.run(hash, content);
    },
    *getBlob(hash: string) {
      return s.getBlob.get(hash) as Buffer | undefined;
    },
    *manifestId(hash: string) {
      return s.manifestId.get(hash) as number | undefined;
    },
    *putManifest(hash: string, body: string) {
      const known = s.manifestId.get(hash) as number | undefined;
      return known ?? Number(s.insertManifest.run(hash, body).lastInsertRowid);
    },
    *getManifest(id: number) {
      return s.getManifest.get(id) as { hash: string; body: string } | undefined;
    },
    *insertCheckpointFiles(row: CheckpointFilesRow & { checkpointId: string }) {
      s.insertCheckpointFiles.run(row);
    },
    *checkpointManifest(checkpointId: string) {
      return s.checkpointManifest.get(checkpointId) as CheckpointFilesRow | undefined;
    },
    *lastCheckpointFiles(branchId: string, from: number, upTo: number) {
      return s.lastCheckpointFiles.get(branchId, from, upTo) as CheckpointFilesRow | undefined;
    },
    *deleteUnreferencedFiles() {
      const manifests = s.deleteUnreferencedManifests.run().changes;
      return manifests + s.deleteUnreferencedBlobs.run().changes;
    },
  };
}
