// Workspaces, their stat caches, file contents and packs, trees and manifests, and the files of checkpoints: PostgreSQL's
// statements and the port's WorkspacesTx.
import type {
  BlobRow,
  CheckpointCallsRow,
  CheckpointFilesRow,
  ManifestRow,
  PackRow,
  StatRow,
  TreeRow,
  WorkspaceRow,
  WorkspacesTx,
} from "../port/index.js";
import { WORKSPACE_COLS } from "./columns.js";
import { insertRow, insertWith } from "./batch.js";
import type { Sql } from "./sql.js";

const FILES_COLS = `manifest_id AS "manifestId", dir, exclude, gitignore, unapplied, unknown`;

/** A checkpoint's files row as the port has it: `unapplied` and `unknown` only when they name some call. */
const filesOf = (row: CheckpointFilesRow | undefined) => {
  if (!row) return undefined;
  const { unapplied, unknown, ...rest } = row;
  return { ...rest, ...(unapplied ? { unapplied } : {}), ...(unknown ? { unknown } : {}) };
};

/** A session's workspace, put in place of the one it had. */
const PUT_WORKSPACE = insertRow("workspaces", ["session_id", "dir", "exclude", "gitignore", "manifest_id", "updated_at", "host"], {
  tail: `ON CONFLICT (session_id) DO UPDATE SET dir = excluded.dir, exclude = excluded.exclude, gitignore = excluded.gitignore,
    manifest_id = excluded.manifest_id, restoring = NULL, updated_at = excluded.updated_at, host = excluded.host`,
});
const INSERT_BLOB = insertRow("file_blobs", ["hash", "content"], { tail: "ON CONFLICT (hash) DO NOTHING" });
/** Every content of a pack, whatever their number, in one statement. */
const INSERT_PACKED = insertWith(
  "file_blobs",
  (p) => `INSERT INTO file_blobs (hash, content, pack_id, pack_offset, size)
  SELECT h, '\\x'::bytea, ${p(1)}, o, n FROM unnest(${p(2)}::text[], ${p(3)}::bigint[], ${p(4)}::bigint[]) AS b(h, o, n) ON CONFLICT (hash) DO NOTHING`,
);
const INSERT_TREES = insertWith(
  "file_trees",
  (p) =>
    `INSERT INTO file_trees (hash, body) SELECT h, b FROM unnest(${p(1)}::text[], ${p(2)}::text[]) AS t(h, b) ON CONFLICT (hash) DO NOTHING`,
);
const INSERT_FILES = insertRow("checkpoint_files", ["checkpoint_id", "manifest_id", "dir", "exclude", "gitignore", "unapplied", "unknown"]);
const PUT_STATS = insertWith(
  "workspace_stats",
  (p) => `INSERT INTO workspace_stats (session_id, dir, body) SELECT ${p(1)}, d, b FROM unnest(${p(2)}::text[], ${p(3)}::bytea[]) AS s(d, b)
  ON CONFLICT (session_id, dir) DO UPDATE SET body = excluded.body`,
);

/** This file's statements, named for the methods that run them. */
const s = {
  getWorkspace: `SELECT ${WORKSPACE_COLS} FROM workspaces WHERE session_id = $1`,
  markHasWorkspace: `UPDATE sessions SET has_workspace = true WHERE id = $1 AND NOT has_workspace`,
  dropStats: `DELETE FROM workspace_stats WHERE session_id = $1`,
  setWorkspaceManifest: `UPDATE workspaces SET manifest_id = $1, updated_at = $2 WHERE session_id = $3`,
  setWorkspaceRestoring: `UPDATE workspaces SET restoring = $1 WHERE session_id = $2`,
  claimWorkspaceRestore: `UPDATE workspaces SET restoring = $1 WHERE session_id = $2 AND restoring = $3`,
  restoringWorkspaces: `SELECT ${WORKSPACE_COLS} FROM workspaces WHERE restoring IS NOT NULL ORDER BY session_id`,
  blobRows: `SELECT hash, content, pack_id AS "packId", pack_offset AS "packOffset", size FROM file_blobs WHERE hash = ANY($1::text[])`,
  presentBlobs: `SELECT hash FROM file_blobs WHERE hash = ANY($1::text[])`,
  insertPack: `INSERT INTO file_packs (codec, content) VALUES ($1, $2) RETURNING id`,
  getPacks: `SELECT id, codec, content FROM file_packs WHERE id = ANY($1::bigint[])`,
  getTrees: `SELECT hash, body FROM file_trees WHERE hash = ANY($1::text[])`,
  manifestId: `SELECT id FROM file_manifests WHERE hash = $1`,
  putManifest: `INSERT INTO file_manifests (hash, body, root) VALUES ($1, $2, $3) ON CONFLICT (hash) DO NOTHING RETURNING id`,
  getManifest: `SELECT hash, body, root FROM file_manifests WHERE id = $1`,
  checkpointsAwaiting: `SELECT f.checkpoint_id AS "checkpointId", f.unapplied, f.unknown FROM checkpoint_files f
    JOIN checkpoints c ON c.id = f.checkpoint_id WHERE c.session_id = $1 AND strpos(f.unknown, $2) > 0`,
  setCheckpointCalls: `UPDATE checkpoint_files SET unapplied = $1, unknown = $2 WHERE checkpoint_id = $3`,
  checkpointManifest: `SELECT ${FILES_COLS} FROM checkpoint_files WHERE checkpoint_id = $1`,
  sessionManifests: `SELECT DISTINCT f.manifest_id AS "manifestId" FROM checkpoints c JOIN checkpoint_files f ON f.checkpoint_id = c.id WHERE c.session_id = $1`,
  lastCheckpointFiles: `SELECT f.manifest_id AS "manifestId", f.dir, f.exclude, f.gitignore, f.unapplied, f.unknown FROM checkpoints c JOIN checkpoint_files f ON f.checkpoint_id = c.id
    WHERE c.branch_id = $1 AND c.position >= $2::bigint AND c.position <= $3::bigint ORDER BY c.position DESC, c.seq DESC LIMIT 1`,
  workspaceStats: `SELECT dir, body FROM workspace_stats WHERE session_id = $1`,
  deleteStatsOf: `DELETE FROM workspace_stats WHERE session_id = $1 AND dir = ANY($2::text[])`,
  deleteManifests: `DELETE FROM file_manifests m
    WHERE NOT EXISTS (SELECT 1 FROM checkpoint_files f WHERE f.manifest_id = m.id)
      AND NOT EXISTS (SELECT 1 FROM workspaces w WHERE w.manifest_id = m.id)
      AND m.id NOT IN (SELECT (restoring::jsonb ->> 'manifestId')::bigint FROM workspaces WHERE restoring IS NOT NULL)`,
  deleteTrees: `WITH RECURSIVE reach(hash) AS (
      SELECT root FROM file_manifests WHERE root IS NOT NULL
      UNION
      SELECT e ->> 1 FROM reach JOIN file_trees t ON t.hash = reach.hash, jsonb_array_elements(t.body::jsonb) e WHERE right(e ->> 0, 1) = '/')
    DELETE FROM file_trees t WHERE NOT EXISTS (SELECT 1 FROM reach WHERE reach.hash = t.hash)`,
  deleteBlobs: `WITH held AS MATERIALIZED (
      SELECT j.value AS hash FROM file_manifests m, jsonb_each_text(m.body::jsonb) j WHERE m.root IS NULL
      UNION SELECT e ->> 1 FROM file_trees t, jsonb_array_elements(t.body::jsonb) e WHERE right(e ->> 0, 1) <> '/'
      UNION SELECT replace(j.value, '+x', '') FROM call_paths c, jsonb_each_text(c.outputs::jsonb) j
        WHERE c.outputs IS NOT NULL AND j.value IS NOT NULL)
    DELETE FROM file_blobs b WHERE NOT EXISTS (SELECT 1 FROM held WHERE held.hash = b.hash)`,
  deletePacks: `DELETE FROM file_packs p WHERE NOT EXISTS (SELECT 1 FROM file_blobs b WHERE b.pack_id = p.id)`,
};

export function workspacesTx(sql: Sql): WorkspacesTx {
  return {
    *getWorkspace(sessionId: string) {
      return yield* sql.one<WorkspaceRow>(s.getWorkspace, [sessionId]);
    },
    *putWorkspace(r: WorkspaceRow) {
      yield* sql.later(PUT_WORKSPACE, [r.sessionId, r.dir, r.exclude, r.gitignore, r.manifestId, r.updatedAt, r.host]);
      yield* sql.later(s.markHasWorkspace, [r.sessionId]);
      yield* sql.later(s.dropStats, [r.sessionId]);
    },
    *setWorkspaceManifest(sessionId: string, manifestId: number, at: number) {
      yield* sql.later(s.setWorkspaceManifest, [manifestId, at, sessionId]);
    },
    *setWorkspaceRestoring(sessionId: string, restoring: string | null) {
      yield* sql.later(s.setWorkspaceRestoring, [restoring, sessionId]);
    },
    *claimWorkspaceRestore(sessionId: string, expected: string, next: string) {
      return (yield* sql.exec(s.claimWorkspaceRestore, [next, sessionId, expected])) === 1;
    },
    *restoringWorkspaces() {
      return yield* sql.rows<WorkspaceRow>(s.restoringWorkspaces);
    },
    *insertBlob(hash: string, content: Buffer) {
      yield* sql.later(INSERT_BLOB, [hash, content]);
    },
    *blobRows(hashes: readonly string[]) {
      if (hashes.length === 0) return [];
      return yield* sql.rows<BlobRow>(s.blobRows, [hashes]);
    },
    *presentBlobs(hashes: readonly string[]) {
      if (hashes.length === 0) return [];
      return yield* sql.column<string>(s.presentBlobs, [hashes]);
    },
    *insertPack(codec: string, content: Buffer, blobs: readonly { hash: string; offset: number; size: number }[]) {
      const [id] = yield* sql.column<number>(s.insertPack, [codec, content]);
      yield* sql.later(INSERT_PACKED, [id, blobs.map((b) => b.hash), blobs.map((b) => b.offset), blobs.map((b) => b.size)]);
      return id!;
    },
    *getPacks(ids: readonly number[]) {
      if (ids.length === 0) return [];
      return yield* sql.rows<PackRow>(s.getPacks, [ids]);
    },
    *getTrees(hashes: readonly string[]) {
      if (hashes.length === 0) return [];
      return yield* sql.rows<TreeRow>(s.getTrees, [hashes]);
    },
    *insertTrees(rows: readonly TreeRow[]) {
      if (rows.length === 0) return;
      yield* sql.later(INSERT_TREES, [rows.map((r) => r.hash), rows.map((r) => r.body)]);
    },
    *manifestId(hash: string) {
      return (yield* sql.column<number>(s.manifestId, [hash]))[0];
    },
    *putManifest(hash: string, body: string, root: string | null) {
      // Looked up first (a stored one is the common case, and ids are not drawn in vain); writers of several sessions run
      // at once here, so the unique index decides, and a row committed meanwhile is read by a statement of its own.
      const select = `SELECT id FROM file_manifests WHERE hash = $1`;
      const [known] = yield* sql.column<number>(select, [hash]);
      if (known !== undefined) return known;
      const [id] = yield* sql.column<number>(s.putManifest, [hash, body, root]);
      return id ?? (yield* sql.column<number>(select, [hash]))[0]!;
    },
    *getManifest(id: number) {
      return yield* sql.one<ManifestRow>(s.getManifest, [id]);
    },
    *insertCheckpointFiles(r: CheckpointFilesRow & { checkpointId: string }) {
      yield* sql.later(INSERT_FILES, [r.checkpointId, r.manifestId, r.dir, r.exclude, r.gitignore, r.unapplied ?? null, r.unknown ?? null]);
    },
    *checkpointsAwaiting(sessionId: string, entryId: string) {
      return yield* sql.rows<CheckpointCallsRow>(s.checkpointsAwaiting, [sessionId, JSON.stringify(entryId)]);
    },
    *setCheckpointCalls(r: CheckpointCallsRow) {
      yield* sql.later(s.setCheckpointCalls, [r.unapplied, r.unknown, r.checkpointId]);
    },
    *checkpointManifest(checkpointId: string) {
      return filesOf(yield* sql.one<CheckpointFilesRow>(s.checkpointManifest, [checkpointId]));
    },
    *sessionManifests(sessionId: string) {
      return (yield* sql.rows<{ manifestId: number | string }>(s.sessionManifests, [sessionId])).map((r) => Number(r.manifestId));
    },
    *lastCheckpointFiles(branchId: string, from: number, upTo: number) {
      return filesOf(yield* sql.one<CheckpointFilesRow>(s.lastCheckpointFiles, [branchId, from, upTo]));
    },
    *workspaceStats(sessionId: string) {
      return yield* sql.rows<StatRow>(s.workspaceStats, [sessionId]);
    },
    *putWorkspaceStats(sessionId: string, rows: readonly StatRow[], deleted: readonly string[]) {
      if (deleted.length > 0) yield* sql.later(s.deleteStatsOf, [sessionId, deleted]);
      if (rows.length > 0) yield* sql.later(PUT_STATS, [sessionId, rows.map((r) => r.dir), rows.map((r) => r.body)]);
    },
    *deleteUnreferencedFiles() {
      // NOT IN, not NOT EXISTS, for the restore journals: a journal without a manifest id keeps every manifest, as on SQLite.
      const manifests = yield* sql.exec(s.deleteManifests);
      // The trees the remaining manifests reach (a subdirectory's entry name ends with "/").
      const trees = yield* sql.exec(s.deleteTrees);
      // The hashes every manifest and tree holds, read once: an anti-join, whatever their number.
      const blobs = yield* sql.exec(s.deleteBlobs);
      const packs = yield* sql.exec(s.deletePacks);
      return manifests + trees + blobs + packs;
    },
  };
}
