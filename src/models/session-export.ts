// The export document of one session (exportSession / importSession): its shape as a type and as a runtime check.
// Times are milliseconds since the epoch with microsecond resolution, exactly as stored; JSON payloads are values.
import { z } from "zod";
import { DEFAULT_LIMITS, MAX_STATE_VERSION } from "./limits.js";
import { malformedIssue, wellFormedText } from "./inputs.js";
import { loneSurrogatePath, type JsonObject, type JsonValue } from "./json.js";

/** The `format` tag of a forkpoint session export. */
export const EXPORT_FORMAT = "forkpoint.session";
/** The version of the export document this forkpoint writes and reads. */
export const EXPORT_VERSION = 1;

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

/**
 * Everything a session recorded, as one JSON document. The same session always exports to the same
 * document, and `JSON.stringify` of it to the same bytes (ids and times kept, nothing about the export itself).
 * The owner, the applied set (the world) and the move journal are not part of it.
 */
export interface SessionExport {
  format: typeof EXPORT_FORMAT;
  version: typeof EXPORT_VERSION;
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
  entries: ExportedEntry[];
  states: ExportedState[];
  checkpoints: ExportedCheckpoint[];
  events: ExportedEvent[];
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

/** The runtime check of a `SessionExport` (shape only; the importer checks ids, links and hashes). */
export const sessionExportSchema = z.strictObject({
  format: z.literal(EXPORT_FORMAT),
  version: z.literal(EXPORT_VERSION),
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
      callId: text.nullable(),
      clientId: text.nullable(),
      metadata: jsonObject.nullable(),
      state: hash.nullable(),
      createdAt: time,
      hash,
      completion: z
        .strictObject({ status: z.enum(["succeeded", "failed"]), result: json.nullable(), error: json.nullable(), completedAt: time, hash })
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
      kind: text,
      refId: id,
      branchId: id,
      detail: wellFormedText()
        .max(4 * MAX)
        .nullable(),
      createdAt: time,
    }),
  ),
});
