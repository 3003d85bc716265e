// Workspaces, file contents and manifests, and the files of checkpoints: PostgreSQL's statements and the port's WorkspacesTx.
import type { CheckpointFilesRow, WorkspaceRow, WorkspacesTx } from "../port/index.js";
import { WORKSPACE_COLS } from "./columns.js";
import type { Sql } from "./sql.js";

const FILES_COLS = `manifest_id AS "manifestId", dir, exclude`;

export function workspacesTx(sql: Sql): WorkspacesTx {
  return {
    *getWorkspace(sessionId: string) {
      return yield* sql.one<WorkspaceRow>(`SELECT ${WORKSPACE_COLS} FROM workspaces WHERE session_id = $1`, [sessionId]);
    },
    *putWorkspace(r: WorkspaceRow) {
      yield* sql.later(
        `INSERT INTO workspaces (session_id, dir, exclude, manifest_id, updated_at, host) VALUES ($1, $2, $3, $4, $5, $6)
        ON CONFLICT (session_id) DO UPDATE SET dir = excluded.dir, exclude = excluded.exclude, manifest_id = excluded.manifest_id,
          restoring = NULL, updated_at = excluded.updated_at, host = excluded.host`,
        [r.sessionId, r.dir, r.exclude, r.manifestId, r.updatedAt, r.host],
      );
      yield* sql.later(`UPDATE sessions SET has_workspace = true WHERE id = $1 AND NOT has_workspace`, [r.sessionId]);
    },
    *setWorkspaceManifest(sessionId: string, manifestId: number, at: number) {
      yield* sql.later(`UPDATE workspaces SET manifest_id = $1, updated_at = $2 WHERE session_id = $3`, [manifestId, at, sessionId]);
    },
    *setWorkspaceRestoring(sessionId: string, restoring: string | null) {
      yield* sql.later(`UPDATE workspaces SET restoring = $1 WHERE session_id = $2`, [restoring, sessionId]);
    },
    *claimWorkspaceRestore(sessionId: string, expected: string, next: string) {
      return (
        (yield* sql.exec(`UPDATE workspaces SET restoring = $1 WHERE session_id = $2 AND restoring = $3`, [next, sessionId, expected])) ===
        1
      );
    },
    *restoringWorkspaces() {
      return yield* sql.rows<WorkspaceRow>(`SELECT ${WORKSPACE_COLS} FROM workspaces WHERE restoring IS NOT NULL ORDER BY session_id`);
    },
    *insertBlob(hash: string, content: Buffer) {
      yield* sql.later(`INSERT INTO file_blobs (hash, content) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING`, [hash, content]);
    },
    *getBlob(hash: string) {
      return (yield* sql.column<Buffer>(`SELECT content FROM file_blobs WHERE hash = $1`, [hash]))[0];
    },
    *manifestId(hash: string) {
      return (yield* sql.column<number>(`SELECT id FROM file_manifests WHERE hash = $1`, [hash]))[0];
    },
    *putManifest(hash: string, body: string) {
      // Looked up first (a stored one is the common case, and ids are not drawn in vain); writers of several sessions run
      // at once here, so the unique index decides, and a row committed meanwhile is read by a statement of its own.
      const select = `SELECT id FROM file_manifests WHERE hash = $1`;
      const [known] = yield* sql.column<number>(select, [hash]);
      if (known !== undefined) return known;
      const [id] = yield* sql.column<number>(
        `INSERT INTO file_manifests (hash, body) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING RETURNING id`,
        [hash, body],
      );
      return id ?? (yield* sql.column<number>(select, [hash]))[0]!;
    },
    *getManifest(id: number) {
      return yield* sql.one<{ hash: string; body: string }>(`SELECT hash, body FROM file_manifests WHERE id = $1`, [id]);
    },
    *insertCheckpointFiles(r: CheckpointFilesRow & { checkpointId: string }) {
      yield* sql.later(`INSERT INTO checkpoint_files (checkpoint_id, manifest_id, dir, exclude) VALUES ($1, $2, $3, $4)`, [
        r.checkpointId,
        r.manifestId,
        r.dir,
        r.exclude,
      ]);
    },
    *checkpointManifest(checkpointId: string) {
      return yield* sql.one<CheckpointFilesRow>(`SELECT ${FILES_COLS} FROM checkpoint_files WHERE checkpoint_id = $1`, [checkpointId]);
    },
    *lastCheckpointFiles(branchId: string, from: number, upTo: number) {
      return yield* sql.one<CheckpointFilesRow>(
        `SELECT f.manifest_id AS "manifestId", f.dir, f.exclude FROM checkpoints c JOIN checkpoint_files f ON f.checkpoint_id = c.id
        WHERE c.branch_id = $1 AND c.position >= $2::bigint AND c.position <= $3::bigint ORDER BY c.position DESC, c.seq DESC LIMIT 1`,
        [branchId, from, upTo],
      );
    },
    *deleteUnreferencedFiles() {
      // NOT IN, not NOT EXISTS, for the restore journals: a journal without a manifest id keeps every manifest, as on SQLite.
      const manifests = yield* sql.exec(`DELETE FROM file_manifests m
        WHERE NOT EXISTS (SELECT 1 FROM checkpoint_files f WHERE f.manifest_id = m.id)
          AND NOT EXISTS (SELECT 1 FROM workspaces w WHERE w.manifest_id = m.id)
          AND m.id NOT IN (SELECT (restoring::jsonb ->> 'manifestId')::bigint FROM workspaces WHERE restoring IS NOT NULL)`);
      // The hashes every manifest holds, read once: an anti-join, whatever their number.
      const blobs =
        yield* sql.exec(`WITH held AS MATERIALIZED (SELECT DISTINCT j.value AS hash FROM file_manifests m, jsonb_each_text(m.body::jsonb) j)
        DELETE FROM file_blobs b WHERE NOT EXISTS (SELECT 1 FROM held WHERE held.hash = b.hash)`);
      return manifests + blobs;
    },
  };
}
