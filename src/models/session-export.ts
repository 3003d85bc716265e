// The export document of one session (exportSession / importSession): its shape as a type and as a runtime check.
// Times are milliseconds since the epoch with microsecond resolution, exactly as stored; JSON payloads are values.
import { z } from "zod";
import { DEFAULT_LIMITS, MAX_STATE_VERSION } from "./limits.js";
import { malformedIssue, wellFormedText } from "./inputs.js";
import { loneSurrogatePath, type JsonObject, type JsonValue } from "./json.js";

/** The `format` tag of a forkpoint session export. */
export const EXPORT_FORMAT = "forkpoint.session";
/**
 * The newest version of the export document this forkpoint writes and reads. Version 2 adds `langgraph` (a LangGraph
 * thread's rows); a document without one is still written as version 1, the same bytes as before, which every
 * forkpoint reads. Every version up to this one imports.
 */
export const EXPORT_VERSION = 2;

/** A branch (internal session) in an export, in creation order; the first is the root. */
export interface ExportedBranch {
  id: string;
  parentId: string | null;
  forkCheckpointId: string | null;
  forkPosition: number;
  forkEntryId: string | null;
  name: string | null;
  reason: "root" | "rollback" | "edit";
  createdAt: number;
  /**
   * A failed guarded block's branch: the branch of the document that its rollback made, which a move to this one's
   * head enters while the head is at `continuedAt` (absent in documents of versions without it: no continuation).
   */
  continuedBy?: string;
  continuedAt?: number;
  /** With `continuedBy`: this branch's head when the block first wrote on it, when known (what it wrote comes after). */
  continuedFrom?: number;
}

/** A tool call's completion, written once when it ended. */
export interface ExportedCompletion {
  status: "succeeded" | "failed";
  result: JsonValue | null;
  error: JsonValue | null;
  completedAt: number;
  hash: string;
}

/** One entry of a branch's log: a message, a state change (`state` is the snapshot's hash) or a tool call. */
export interface ExportedEntry {
  id: string;
  branchId: string;
  position: number;
  kind: "message" | "state" | "tool";
  role: string | null;
  /** A message's content or a tool call's args; null for state entries. */
  content: JsonValue | null;
  tool: string | null;
  callId: string | null;
  clientId: string | null;
  metadata: JsonObject | null;
  state: string | null;
  createdAt: number;
  /** The SHA-256 chain hash, checked again on import. */
  hash: string;
  /** Tool calls only: null while running (or left running by a crash). */
  completion: ExportedCompletion | null;
}

/** A state document, addressed by the hash of its canonical JSON (and of its version, when not 1). */
export interface ExportedState {
  hash: string;
  value: JsonValue;
  /** The state schema version it was written under; absent for version 1 (and in exports made before versions). */
  version?: number;
}

/** A checkpoint: a named point (branch + position) of the session. */
export interface ExportedCheckpoint {
  id: string;
  branchId: string;
  position: number;
  name: string | null;
  auto: boolean;
  metadata: JsonObject | null;
  state: string | null;
  headHash: string;
  createdAt: number;
  expiresAt: number | null;
  /** The checkpoint's checksum as if no one owned it (the owner is not exported); checked on import. */
  checksum: string;
}

/** A timeline event that is not an entry (a switch, a deleted checkpoint, a handoff). */
export interface ExportedEvent {
  kind: string;
  refId: string;
  branchId: string;
  detail: string | null;
  createdAt: number;
}

/** A LangGraph checkpoint of the thread (`ForkpointSaver`), serialized as LangGraph's serde made it (base64). */
export interface ExportedLgCheckpoint {
  checkpointId: string;
  parentCheckpointId: string | null;
  /** The forkpoint checkpoint (of `checkpoints`) it is stored in. */
  fpCheckpointId: string;
  type: string;
  checkpoint: string;
  metadataType: string;
  metadata: string;
  /** JSON of the messages channel's version that the forkpoint checkpoint's messages are (null: none are). */
  messagesVersion: string | null;
}

/** A channel value of the thread at one version (JSON text of the version), serialized (base64). */
export interface ExportedLgValue {
  channel: string;
  version: string;
  type: string;
  value: string;
}

/** A pending write of the thread, under the checkpoint id it names (stored or not), serialized (base64). */
export interface ExportedLgWrite {
  checkpointId: string;
  taskId: string;
  idx: number;
  channel: string;
  type: string;
  value: string;
  taskPath: string;
}

/**
 * The LangGraph thread (one namespace) a session holds, with everything `ForkpointSaver` stored beside the session:
 * its LangGraph checkpoints, channel values and pending writes, each list sorted by its key (code-unit order). The
 * thread's owner is the importing user.
 */
export interface ExportedLangGraph {
  threadId: string;
  checkpointNs: string;
  /** The forkpoint checkpoint (of `checkpoints`) at the thread's empty start. */
  startCheckpointId: string;
  checkpoints: ExportedLgCheckpoint[];
  values: ExportedLgValue[];
  writes: ExportedLgWrite[];
}

/**
 * Everything a session recorded, as one JSON document. The same session always exports to the same
 * document, and `JSON.stringify` of it to the same bytes (ids and times kept, nothing about the export itself).
 * The owner, the applied set (the world) and the move journal are not part of it.
 */
export interface SessionExport {
  format: typeof EXPORT_FORMAT;
  /** 2 when the document carries `langgraph`, else 1. */
  version: 1 | 2;
  session: {
    id: string;
    title: string | null;
    metadata: JsonObject | null;
    currentBranchId: string;
    origin: { sessionId: string; checkpointId: string } | null;
    createdAt: number;
    updatedAt: number;
  };
  branches: ExportedBranch[];
  // In the order they were written, across branches: an import writes them so (a message's versions keep that order).
  entries: ExportedEntry[];
  states: ExportedState[];
  checkpoints: ExportedCheckpoint[];
  events: ExportedEvent[];
  /** Version 2: the LangGraph thread the session holds (absent when it holds none). */
  langgraph?: ExportedLangGraph;
}

const MAX = DEFAULT_LIMITS.maxStringField;
// Stricter than the API, which trims: exported text is already trimmed, and trimming here would change hashed values.
// Every string of a document is well-formed text (strings.ts), hashes recomputed or not: a lone surrogate is stored
// as other bytes than those hashed.
const text = wellFormedText()
  .min(1)
  .max(MAX)
  .refine((s) => s.trim() === s, "must not start or end with whitespace");
const id = text;
/** A caller's own id (a message's `clientId`, a call's `callId`): stored exactly as given, white space included. */
const callerId = wellFormedText().min(1).max(MAX);
/** Milliseconds since the epoch, within what a `Date` can hold. */
const time = z.number().min(0).max(8.64e15);
const hash = z.string().regex(/^[0-9a-f]{64}$/, "must be a SHA-256 hash (64 lowercase hex digits)");
const position = z.number().int().min(0);
/**
 * JSON payloads are checked in depth (size, depth, plain JSON) when the importer serializes them; their text here,
 * since not every payload is serialized (a failed call's result is not).
 */
const wellFormedJson = (value: unknown, ctx: z.core.$RefinementCtx): void => {
  const path = loneSurrogatePath(value);
  if (path) ctx.addIssue({ code: "custom", ...malformedIssue, path });
};
const json = z.custom<JsonValue>((v) => v !== undefined, "must be a JSON value").superRefine(wellFormedJson);
const jsonObject = z
  .custom<JsonObject>((v) => typeof v === "object" && v !== null && !Array.isArray(v), "must be a JSON object")
  .superRefine(wellFormedJson);

/** A key of `ForkpointSaver`'s (a thread, namespace, checkpoint, task id, channel, version): what a put takes. */
const saverKey = wellFormedText().max(MAX, `must be at most ${MAX} characters`);
/**
 * Bytes as canonical base64 (what `Buffer.toString("base64")` writes, nothing else). No size limit: the saver stores
 * channel values of any size, and what it stored must import.
 */
const base64 = z
  .string()
  .refine((s) => Buffer.from(s, "base64").toString("base64") === s, 'must be base64 (as Buffer.toString("base64") writes it)');

const langgraphSchema = z.strictObject({
  threadId: saverKey,
  checkpointNs: saverKey,
  startCheckpointId: id,
  checkpoints: z.array(
    z.strictObject({
      checkpointId: saverKey,
      parentCheckpointId: saverKey.nullable(),
      fpCheckpointId: id,
      type: saverKey,
      checkpoint: base64,
      metadataType: saverKey,
      metadata: base64,
      messagesVersion: saverKey.nullable(),
    }),
  ),
  values: z.array(z.strictObject({ channel: saverKey, version: saverKey, type: saverKey, value: base64 })),
  writes: z.array(
    z.strictObject({
      checkpointId: saverKey,
      taskId: saverKey,
      idx: z.number().int().min(-2_147_483_648).max(2_147_483_647),
      channel: saverKey,
      type: saverKey,
      value: base64,
      taskPath: wellFormedText(),
    }),
  ),
});

/** The runtime check of a `SessionExport` (shape only; the importer checks ids, links and hashes). */
export const sessionExportSchema = z
  .strictObject({
    format: z.literal(EXPORT_FORMAT),
    version: z.union([z.literal(1), z.literal(EXPORT_VERSION)], {
      message: `must be 1 or ${EXPORT_VERSION} (a newer forkpoint wrote it?)`,
    }),
    session: z.strictObject({
      id,
      title: text.nullable(),
      metadata: jsonObject.nullable(),
      currentBranchId: id,
      origin: z.strictObject({ sessionId: id, checkpointId: id }).nullable(),
      createdAt: time,
      updatedAt: time,
    }),
    branches: z
      .array(
        z.strictObject({
          id,
          parentId: id.nullable(),
          forkCheckpointId: id.nullable(),
          forkPosition: position,
          forkEntryId: id.nullable(),
          name: text.nullable(),
          reason: z.enum(["root", "rollback", "edit"]),
          createdAt: time,
          continuedBy: id.optional(),
          continuedAt: position.optional(),
          continuedFrom: position.optional(),
        }),
      )
      .min(1, "must hold at least the root branch"),
    entries: z.array(
      z.strictObject({
        id,
        branchId: id,
        position: position.min(1),
        kind: z.enum(["message", "state", "tool"]),
        role: text.nullable(),
        content: json.nullable(),
        tool: text.nullable(),
        callId: callerId.nullable(),
        clientId: callerId.nullable(),
        metadata: jsonObject.nullable(),
        state: hash.nullable(),
        createdAt: time,
        hash,
        completion: z
          .strictObject({
            status: z.enum(["succeeded", "failed"]),
            result: json.nullable(),
            error: json.nullable(),
            completedAt: time,
            hash,
          })
          .nullable(),
      }),
    ),
    states: z.array(z.strictObject({ hash, value: json, version: z.number().int().min(1).max(MAX_STATE_VERSION).optional() })),
    checkpoints: z.array(
      z.strictObject({
        id,
        branchId: id,
        position,
        name: text.nullable(),
        auto: z.boolean(),
        metadata: jsonObject.nullable(),
        state: hash.nullable(),
        headHash: hash,
        createdAt: time,
        expiresAt: time.nullable(),
        checksum: hash,
      }),
    ),
    events: z.array(
      z.strictObject({
        // What the timeline shows: "branch" events were written by early versions, whose documents still import.
        kind: z.enum(["branch", "switch", "undo", "redo", "checkpoint-deleted", "handoff"]),
        refId: id,
        branchId: id,
        detail: wellFormedText()
          .max(4 * MAX)
          .nullable(),
        createdAt: time,
      }),
    ),
    langgraph: langgraphSchema.optional(),
  })
  .superRefine((doc, ctx) => {
    // Version 1 knows no LangGraph section; version 2 is written only with one.
    if (doc.version === 1 && doc.langgraph !== undefined)
      ctx.addIssue({ code: "custom", path: ["langgraph"], message: "is not part of version 1 (a version 2 document carries it)" });
    if (doc.version === 2 && doc.langgraph === undefined)
      ctx.addIssue({ code: "custom", path: ["langgraph"], message: "is required in version 2 (a document without it is version 1)" });
  });
