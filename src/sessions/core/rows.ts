// Turns stored rows into the plain objects of the public API.
import { fromJsonText, type JsonObject, type JsonValue } from "../../models/json.js";
import type {
  Branch,
  BranchReason,
  Checkpoint,
  Entry,
  Message,
  MessagePreview,
  SessionInfo,
  SessionListItem,
  StateChange,
  ToolErrorInfo,
  ToolInvocation,
} from "../../models/types.js";
import { previewOf } from "../../models/preview.js";
import type { BranchRow, EntryRow, ListedCheckpoint, ListedSessionRow, MessageRow, SessionRow, ToolRow } from "../../store/port/index.js";

const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

export function toSessionInfo(row: SessionRow): SessionInfo {
  return {
    id: row.id,
    userId: row.userId,
    title: row.title,
    metadata: parse<JsonObject>(row.metadata),
    currentBranchId: row.currentBranchId,
    origin: row.originSessionId && row.originCheckpointId ? { sessionId: row.originSessionId, checkpointId: row.originCheckpointId } : null,
    createdAt: new Date(row.createdAt),
    updatedAt: new Date(row.updatedAt),
  };
}

export function toSessionListItem(row: ListedSessionRow): SessionListItem {
  return { ...toSessionInfo(row), lastMessage: row.lastMessage ? toMessagePreview(row.lastMessage) : null, messageCount: row.messageCount };
}

export function toMessagePreview(row: MessageRow): MessagePreview {
  return {
    id: row.id,
    clientId: row.clientId,
    branchId: row.branchId,
    position: row.position,
    role: row.role as string,
    ...previewOf(JSON.parse(row.content as string) as JsonValue),
    createdAt: new Date(row.createdAt),
  };
}

export function toBranch(row: BranchRow, head: number, currentId: string): Branch {
  return {
    id: row.id,
    sessionId: row.sessionId,
    parentId: row.parentId,
    forkCheckpointId: row.forkCheckpointId,
    forkPosition: row.forkPosition,
    name: row.name,
    reason: row.reason as BranchReason,
    head,
    current: row.id === currentId,
    createdAt: new Date(row.createdAt),
  };
}

export function toMessage(row: MessageRow): Message {
  return {
    id: row.id,
    branchId: row.branchId,
    position: row.position,
    role: row.role as string,
    content: fromJsonText(row.content as string),
    clientId: row.clientId,
    metadata: parse<JsonObject>(row.metadata),
    createdAt: new Date(row.createdAt),
  };
}

export function toToolInvocation(row: ToolRow): ToolInvocation {
  return {
    id: row.id,
    branchId: row.branchId,
    position: row.position,
    tool: row.tool as string,
    args: JSON.parse(row.content as string) as JsonValue,
    status: row.status ?? "running",
    result: parse<JsonValue>(row.result),
    error: parse<ToolErrorInfo>(row.error),
    callId: row.callId,
    applied: row.appliedSeq !== null,
    createdAt: new Date(row.createdAt),
    completedAt: row.completedAt === null ? null : new Date(row.completedAt),
  };
}

export function toStateChange(row: EntryRow): StateChange {
  return { id: row.id, branchId: row.branchId, position: row.position, createdAt: new Date(row.createdAt) };
}

/** An entry tagged with its kind; tool entries need their joined row. */
export function toEntry(row: EntryRow | ToolRow): Entry {
  if (row.kind === "message") return { kind: "message", ...toMessage(row) };
  if (row.kind === "tool") return { kind: "tool", ...toToolInvocation(row as ToolRow) };
  return { kind: "state", ...toStateChange(row) };
}

export function toCheckpoint(row: ListedCheckpoint): Checkpoint {
  return {
    id: row.id,
    sessionId: row.sessionId,
    branchId: row.branchId,
    position: row.position,
    name: row.name,
    auto: row.auto,
    metadata: parse<JsonObject>(row.metadata),
    userId: row.userId,
    checksum: row.checksum,
    createdAt: new Date(row.createdAt),
    expiresAt: row.expiresAt === null ? null : new Date(row.expiresAt),
  };
}
