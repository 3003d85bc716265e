// Workspaces, their stat caches, file contents and packs, trees and manifests, and the files of checkpoints: SQLite's
// statements and the port's WorkspacesTx.
import type Database from "better-sqlite3";
import type {
  BlobRow,
  CheckpointCallsRow,
  CheckpointFilesRow,
  PackRow,
  StatRow,
  TreeRow,
  WorkspaceRow,
  WorkspacesTx,
} from "../port/index.js";
import { WORKSPACE_COLS } from "./columns.js";
import { prepare, type RowMode } from "./object-rows.js";

const FILES_COLS = `manifest_id AS manifestId, dir, exclude, gitignore, unapplied, unknown`;

/** A list of values as one parameter (JSON), so one prepared statement serves any number of them. */
const list = (values: readonly (string | number)[]) => JSON.stringify(values);

const workspaceOf = (row: WorkspaceRow | undefined) => row && { ...row, gitignore: Boolean(row.gitignore) };
/** A checkpoint's files row as the port has it: `unapplied` and `unknown` only when they name some call. */
const filesOf = (row: CheckpointFilesRow | undefined) => {
  if (!row) return undefined;
  const { unapplied, unknown, ...rest } = row;
  return { ...rest, gitignore: Boolean(row.gitignore), ...(unapplied ? { unapplied } : {}), ...(unknown ? { unknown } : {}) };
};

export function workspacesTx(db: Database.Database): WorkspacesTx {
  const p = (sql: string, mode?: RowMode) => prepare(db, sql, mode);
  const s = {
    getWorkspace: p(`SELECT ${WORKSPACE_COLS} FROM workspaces WHERE session_id = ?`),
    putWorkspace:
      p(`INSERT INTO workspaces (session_id, dir, exclude, gitignore, manifest_id, updated_at, host) VALUES (@sessionId, @dir, @exclude, @gitignore, @manifestId, @updatedAt, @host)
    ON CONFLICT (session_id) DO UPDATE SET dir = excluded.dir, exclude = excluded.exclude, gitignore = excluded.gitignore,
      manifest_id = excluded.manifest_id, restoring = NULL, updated_at = excluded.updated_at, host = excluded.host`),
    markHasWorkspace: p(`UPDATE sessions SET has_workspace = 1 WHERE id = ? AND has_workspace = 0`),
    clearStats: p(`DELETE FROM workspace_stats WHERE session_id = ?`),
    setWorkspaceManifest: p(`UPDATE workspaces SET manifest_id = ?, updated_at = ? WHERE session_id = ?`),
    setWorkspaceRestoring: p(`UPDATE workspaces SET restoring = ? WHERE session_id = ?`),
    claimWorkspaceRestore: p(`UPDATE workspaces SET restoring = ? WHERE session_id = ? AND restoring = ?`),
    restoringWorkspaces: p(`SELECT ${WORKSPACE_COLS} FROM workspaces WHERE restoring IS NOT NULL`),
    insertBlob: p(`INSERT INTO file_blobs (hash, content) VALUES (?, ?) ON CONFLICT (hash) DO NOTHING`),
    blobRows: p(
      `SELECT hash, content, pack_id AS packId, pack_offset AS packOffset, size FROM file_blobs WHERE hash IN (SELECT value FROM json_each(?))`,
    ),
    presentBlobs: p(`SELECT hash FROM file_blobs WHERE hash IN (SELECT value FROM json_each(?))`, "pluck"),
    insertPack: p(`INSERT INTO file_packs (codec, content) VALUES (?, ?)`),
    insertPackedBlob: p(
      `INSERT INTO file_blobs (hash, content, pack_id, pack_offset, size) VALUES (?, x'', ?, ?, ?) ON CONFLICT (hash) DO NOTHING`,
    ),
    getPacks: p(`SELECT id, codec, content FROM file_packs WHERE id IN (SELECT value FROM json_each(?))`),
    getTrees: p(`SELECT hash, body FROM file_trees WHERE hash IN (SELECT value FROM json_each(?))`),
    insertTree: p(`INSERT INTO file_trees (hash, body) VALUES (?, ?) ON CONFLICT (hash) DO NOTHING`),
    manifestId: p(`SELECT id FROM file_manifests WHERE hash = ?`, "pluck"),
    insertManifest: p(`INSERT INTO file_manifests (hash, body, root) VALUES (?, ?, ?)`),
    getManifest: p(`SELECT hash, body, root FROM file_manifests WHERE id = ?`),
    insertCheckpointFiles: p(
      `INSERT INTO checkpoint_files (checkpoint_id, manifest_id, dir, exclude, gitignore, unapplied, unknown)
      VALUES (@checkpointId, @manifestId, @dir, @exclude, @gitignore, @unapplied, @unknown)`,
    ),
    checkpointManifest: p(`SELECT ${FILES_COLS} FROM checkpoint_files WHERE checkpoint_id = ?`),
    checkpointsAwaiting: p(`SELECT f.checkpoint_id AS checkpointId, f.unapplied, f.unknown FROM checkpoint_files f
    JOIN checkpoints c ON c.id = f.checkpoint_id WHERE c.session_id = ? AND instr(f.unknown, ?) > 0`),
    setCheckpointCalls: p(`UPDATE checkpoint_files SET unapplied = @unapplied, unknown = @unknown WHERE checkpoint_id = @checkpointId`),
    sessionManifests: p(
      `SELECT DISTINCT f.manifest_id FROM checkpoints c JOIN checkpoint_files f ON f.checkpoint_id = c.id WHERE c.session_id = ?`,
      "pluck",
    ),
    lastCheckpointFiles:
      p(`SELECT f.manifest_id AS manifestId, f.dir, f.exclude, f.gitignore, f.unapplied, f.unknown FROM checkpoints c JOIN checkpoint_files f ON f.checkpoint_id = c.id
    WHERE c.branch_id = ? AND c.position >= ? AND c.position <= ? ORDER BY c.position DESC, c.seq DESC LIMIT 1`),
    workspaceStats: p(`SELECT dir, body FROM workspace_stats WHERE session_id = ?`),
    putStat: p(
      `INSERT INTO workspace_stats (session_id, dir, body) VALUES (?, ?, ?) ON CONFLICT (session_id, dir) DO UPDATE SET body = excluded.body`,
    ),
    deleteStat: p(`DELETE FROM workspace_stats WHERE session_id = ? AND dir = ?`),
    deleteUnreferencedManifests: p(`DELETE FROM file_manifests WHERE id NOT IN (SELECT manifest_id FROM checkpoint_files)
    AND id NOT IN (SELECT manifest_id FROM workspaces)
    AND id NOT IN (SELECT json_extract(restoring, '$.manifestId') FROM workspaces WHERE restoring IS NOT NULL)`),
    // The trees the remaining manifests reach (a subdirectory's entry name ends with "/").
    deleteUnreachedTrees: p(`WITH RECURSIVE reach(hash) AS (
      SELECT root FROM file_manifests WHERE root IS NOT NULL
      UNION
      SELECT json_extract(j.value, '$[1]') FROM reach JOIN file_trees t ON t.hash = reach.hash, json_each(t.body) j
        WHERE substr(json_extract(j.value, '$[0]'), -1) = '/')
    DELETE FROM file_trees WHERE hash NOT IN (SELECT hash FROM reach)`),
    // A call's outputs hold their contents too: a move takes a shared call's files from them (a file id is its
    // content's hash, "+x" after it for an executable file).
    deleteUnreferencedBlobs: p(`DELETE FROM file_blobs
    WHERE hash NOT IN (SELECT j.value FROM file_manifests m, json_each(m.body) j WHERE m.root IS NULL)
      AND hash NOT IN (SELECT json_extract(j.value, '$[1]') FROM file_trees t, json_each(t.body) j WHERE substr(json_extract(j.value, '$[0]'), -1) <> '/')
      AND hash NOT IN (SELECT replace(j.value, '+x', '') FROM call_paths c, json_each(c.outputs) j
        WHERE c.outputs IS NOT NULL AND j.value IS NOT NULL)`),
    deleteEmptyPacks: p(`DELETE FROM file_packs WHERE id NOT IN (SELECT pack_id FROM file_blobs WHERE pack_id IS NOT NULL)`),
  };
  return {
    *getWorkspace(sessionId: string) {
      return workspaceOf(s.getWorkspace.get(sessionId) as WorkspaceRow | undefined);
    },
    *putWorkspace(row: WorkspaceRow) {
      s.putWorkspace.run({ ...row, gitignore: row.gitignore ? 1 : 0 });
      s.markHasWorkspace.run(row.sessionId);
      s.clearStats.run(row.sessionId);
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
      return (s.restoringWorkspaces.all() as WorkspaceRow[]).map((r) => workspaceOf(r)!);
    },
    *insertBlob(hash: string, content: Buffer) {
      s.insertBlob.run(hash, content);
    },
    *blobRows(hashes: readonly string[]) {
      return hashes.length === 0 ? [] : (s.blobRows.all(list(hashes)) as BlobRow[]);
    },
    *presentBlobs(hashes: readonly string[]) {
      return hashes.length === 0 ? [] : (s.presentBlobs.all(list(hashes)) as string[]);
    },
    *insertPack(codec: string, content: Buffer, blobs: readonly { hash: string; offset: number; size: number }[]) {
      const id = Number(s.insertPack.run(codec, content).lastInsertRowid);
      for (const b of blobs) s.insertPackedBlob.run(b.hash, id, b.offset, b.size);
      return id;
    },
    *getPacks(ids: readonly number[]) {
      return ids.length === 0 ? [] : (s.getPacks.all(list(ids)) as PackRow[]);
    },
    *getTrees(hashes: readonly string[]) {
      return hashes.length === 0 ? [] : (s.getTrees.all(list(hashes)) as TreeRow[]);
    },
    *insertTrees(rows: readonly TreeRow[]) {
      for (const r of rows) s.insertTree.run(r.hash, r.body);
    },
    *manifestId(hash: string) {
      return s.manifestId.get(hash) as number | undefined;
    },
    *putManifest(hash: string, body: string, root: string | null) {
      const known = s.manifestId.get(hash) as number | undefined;
      return known ?? Number(s.insertManifest.run(hash, body, root).lastInsertRowid);
    },
    *getManifest(id: number) {
      return s.getManifest.get(id) as { hash: string; body: string; root: string | null } | undefined;
    },
    *insertCheckpointFiles(row: CheckpointFilesRow & { checkpointId: string }) {
      s.insertCheckpointFiles.run({
        ...row,
        gitignore: row.gitignore ? 1 : 0,
        unapplied: row.unapplied ?? null,
        unknown: row.unknown ?? null,
      });
    },
    *checkpointsAwaiting(sessionId: string, entryId: string) {
      return s.checkpointsAwaiting.all(sessionId, JSON.stringify(entryId)) as CheckpointCallsRow[];
    },
    *setCheckpointCalls(row: CheckpointCallsRow) {
      s.setCheckpointCalls.run(row);
    },
    *checkpointManifest(checkpointId: string) {
      return filesOf(s.checkpointManifest.get(checkpointId) as CheckpointFilesRow | undefined);
    },
    *sessionManifests(sessionId: string) {
      return s.sessionManifests.all(sessionId) as number[];
    },
    *lastCheckpointFiles(branchId: string, from: number, upTo: number) {
      return filesOf(s.lastCheckpointFiles.get(branchId, from, upTo) as CheckpointFilesRow | undefined);
    },
    *workspaceStats(sessionId: string) {
      return s.workspaceStats.all(sessionId) as StatRow[];
    },
    *putWorkspaceStats(sessionId: string, rows: readonly StatRow[], deleted: readonly string[]) {
      for (const dir of deleted) s.deleteStat.run(sessionId, dir);
      for (const r of rows) s.putStat.run(sessionId, r.dir, r.body);
    },
    *deleteUnreferencedFiles() {
      const manifests = s.deleteUnreferencedManifests.run().changes;
      const trees = s.deleteUnreachedTrees.run().changes;
      const blobs = s.deleteUnreferencedBlobs.run().changes;
      return manifests + trees + blobs + s.deleteEmptyPacks.run().changes;
    },
  };
}
