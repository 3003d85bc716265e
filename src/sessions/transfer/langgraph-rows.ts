// A LangGraph thread's rows in a session export: read for exportSession, checked and written back by importSession.
import { ConflictError, ValidationError } from "../../models/errors.js";
import type { ExportedLangGraph, SessionExport } from "../../models/session-export.js";
import type { LgBlobRow, LgCheckpointRow, LgThreadRow, LgWriteRow, Step, Tx } from "../../store/port/index.js";
import { exportedWrite, importedWrite } from "../moves/mark-seq.js";

/** What `ForkpointSaver` stored beside a session that holds a thread, as read in one transaction. */
export interface LangGraphRows {
  thread: LgThreadRow;
  checkpoints: LgCheckpointRow[];
  blobs: LgBlobRow[];
  writes: LgWriteRow[];
  /** The forkpoint checkpoints those rows stand on: an export keeps them even when expired (prune keeps them too). */
  usedCheckpoints: Set<string>;
}

/** The thread the session holds, with its rows; undefined when it holds none. */
export function* readLangGraph(tx: Tx, sessionId: string): Step<LangGraphRows | undefined> {
  const thread = yield* tx.langgraph.threadOfSession(sessionId);
  if (!thread) return undefined;
  const checkpoints = yield* tx.langgraph.checkpointsOf(sessionId);
  const blobs = yield* tx.langgraph.blobsOf(sessionId);
  const writes = yield* tx.langgraph.allWritesOf(sessionId);
  const usedCheckpoints = new Set([thread.startCheckpointId, ...checkpoints.map((c) => c.fpCheckpointId)]);
  return { thread, checkpoints, blobs, writes, usedCheckpoints };
}

/** Code-unit order, the same on every store (PostgreSQL's ORDER BY would follow the database's collation). */
const byKeys =
  <T>(...keys: ((row: T) => string | number)[]) =>
  (a: T, b: T): number => {
    for (const key of keys) {
      const [x, y] = [key(a), key(b)];
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  };

const b64 = (value: Buffer) => value.toString("base64");

/** The document's `langgraph` section: every list sorted by its key, bytes as base64, so the same rows give the same text. */
export function langgraphOf(rows: LangGraphRows): ExportedLangGraph {
  const { thread } = rows;
  return {
    threadId: thread.threadId,
    checkpointNs: thread.checkpointNs,
    startCheckpointId: thread.startCheckpointId,
    checkpoints: [...rows.checkpoints]
      .sort(byKeys((c) => c.checkpointId))
      .map((c) => ({
        checkpointId: c.checkpointId,
        parentCheckpointId: c.parentCheckpointId,
        fpCheckpointId: c.fpCheckpointId,
        type: c.type,
        checkpoint: b64(c.checkpoint),
        metadataType: c.metadataType,
        metadata: b64(c.metadata),
        messagesVersion: c.messagesVersion,
      })),
    values: [...rows.blobs]
      .sort(
        byKeys(
          (v) => v.channel,
          (v) => v.version,
        ),
      )
      .map((v) => ({ channel: v.channel, version: v.version, type: v.type, value: b64(v.value) })),
    writes: [...rows.writes]
      .sort(
        byKeys(
          (w) => w.checkpointId,
          (w) => w.taskId,
          (w) => w.idx,
        ),
      )
      .map((w) => ({
        checkpointId: w.checkpointId,
        taskId: w.taskId,
        idx: w.idx,
        channel: w.channel,
        type: w.type,
        value: b64(exportedWrite(w.channel, w.value)),
        taskPath: w.taskPath,
      })),
  };
}

/** A document's `langgraph` section decoded and checked, ready to be written under a session id. */
export interface PreparedLangGraph {
  section: ExportedLangGraph;
  checkpoints: Omit<LgCheckpointRow, "sessionId">[];
  blobs: Omit<LgBlobRow, "sessionId">[];
  writes: Omit<LgWriteRow, "sessionId">[];
}

/**
 * Checks the section's links (the forkpoint checkpoints it stands on are the document's own) and keys (each once), and
 * decodes its bytes: a `ValidationError` names the first field at fault, before anything is written.
 */
export function prepareLangGraph(doc: SessionExport): PreparedLangGraph | undefined {
  const section = doc.langgraph;
  if (!section) return undefined;
  const field = "document.langgraph";
  const fpIds = new Set(doc.checkpoints.map((c) => c.id));
  if (!fpIds.has(section.startCheckpointId))
    throw new ValidationError(
      `${field}.startCheckpointId`,
      `checkpoint ${section.startCheckpointId} is not among the document's checkpoints`,
    );
  const once = (seen: Set<string>, key: string, at: string, what: string) => {
    if (seen.has(key)) throw new ValidationError(at, `${what} appears twice`);
    seen.add(key);
  };
  const cpKeys = new Set<string>();
  const checkpoints = section.checkpoints.map((c, i) => {
    const at = `${field}.checkpoints[${i}]`;
    once(cpKeys, c.checkpointId, `${at}.checkpointId`, `LangGraph checkpoint ${c.checkpointId}`);
    if (!fpIds.has(c.fpCheckpointId))
      throw new ValidationError(`${at}.fpCheckpointId`, `checkpoint ${c.fpCheckpointId} is not among the document's checkpoints`);
    return { ...c, checkpoint: Buffer.from(c.checkpoint, "base64"), metadata: Buffer.from(c.metadata, "base64") };
  });
  const valueKeys = new Set<string>();
  const blobs = section.values.map((v, i) => {
    once(valueKeys, JSON.stringify([v.channel, v.version]), `${field}.values[${i}]`, `channel ${v.channel} at version ${v.version}`);
    return { ...v, value: Buffer.from(v.value, "base64") };
  });
  const writeKeys = new Set<string>();
  const writes = section.writes.map((w, i) => {
    const key = JSON.stringify([w.checkpointId, w.taskId, w.idx]);
    once(writeKeys, key, `${field}.writes[${i}]`, `the write ${w.idx} of task ${w.taskId} under checkpoint ${w.checkpointId}`);
    return { ...w, value: Buffer.from(w.value, "base64") };
  });
  return { section, checkpoints, blobs, writes };
}

/** A thread the importing user holds already refuses the document, as an id the database holds does. */
export function* refuseExistingThread(tx: Tx, lg: PreparedLangGraph | undefined, userId: string): Step<void> {
  if (!lg) return;
  const { threadId, checkpointNs } = lg.section;
  if (yield* tx.langgraph.getThread(userId, threadId, checkpointNs)) {
    const ns = checkpointNs === "" ? "" : ` (namespace ${JSON.stringify(checkpointNs)})`;
    throw new ConflictError(`cannot import: user ${userId} already has LangGraph thread ${JSON.stringify(threadId)}${ns} in this database`);
  }
}

/** Writes the thread's rows for the imported session (after its checkpoints, which they stand on), owned by `userId`. */
export function* writeLangGraph(tx: Tx, lg: PreparedLangGraph | undefined, sessionId: string, userId: string): Step<void> {
  if (!lg) return;
  const { threadId, checkpointNs, startCheckpointId } = lg.section;
  yield* tx.langgraph.insertThread({ userId, threadId, checkpointNs, sessionId, startCheckpointId });
  for (const c of lg.checkpoints) yield* tx.langgraph.insertCheckpoint({ ...c, sessionId });
  for (const v of lg.blobs) yield* tx.langgraph.insertBlob({ ...v, sessionId });
  const writes: LgWriteRow[] = [];
  for (const w of lg.writes) writes.push({ ...w, sessionId, value: yield* importedWrite(tx, w.channel, w.value) });
  if (writes.length > 0) yield* tx.langgraph.insertWrites(writes, false);
}
