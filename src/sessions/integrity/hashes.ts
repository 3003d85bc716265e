// Hashes: the entry chain (as git chains commits), content-addressed state, and checkpoint checksums.
import canonicalize from "canonicalize";
import * as crypto from "node:crypto";
import type { CheckpointRow, EntryRow, ToolResultRow, ToolRow } from "../../store/port/index.js";

export const GENESIS_HASH = "0".repeat(64);

/** SHA-256 in hex. `crypto.hash` is the one-shot form, about twice as fast on short texts as a Hash object. */
export const sha256 = (data: string | Buffer): string => crypto.hash("sha256", data, "hex");

/** Canonical JSON text (RFC 8785): the same value always gives the same text, whatever its key order. */
export function canonicalJson(value: unknown): string {
  return canonicalize(value) ?? "null";
}

/** The state document `{}`, which every session starts with. */
export const EMPTY_STATE_TEXT = "{}";
export const EMPTY_STATE_HASH = sha256(EMPTY_STATE_TEXT);

type HashedEntryFields = Pick<
  EntryRow,
  "id" | "branchId" | "position" | "kind" | "role" | "content" | "tool" | "callId" | "clientId" | "metadata" | "createdAt"
>;

/** Hash of an entry chained to the previous one; `stateHash` is the state snapshot it sets (state entries only). */
export function entryHash(previousHash: string, e: HashedEntryFields, stateHash: string | null): string {
  return sha256(
    JSON.stringify([
      previousHash,
      e.id,
      e.branchId,
      e.position,
      e.kind,
      e.role,
      e.content,
      e.tool,
      e.callId,
      e.clientId,
      e.metadata,
      stateHash,
      e.createdAt,
    ]),
  );
}

/** Hash of a tool invocation's completion, bound to the invocation's own hash. */
export function toolResultHash(invocationHash: string, r: Omit<ToolResultRow, "hash">): string {
  return sha256(JSON.stringify([invocationHash, r.entryId, r.status, r.result, r.error, r.completedAt]));
}

/**
 * The address of a state document's canonical text written under state schema `version`. Version 1 (every state
 * written before versions existed) hashes the text alone, so old databases and exports still verify; a later version
 * is hashed with the text, so the entry chain and checkpoint checksums (which cover this hash) cover the version too.
 */
export function stateAddress(text: string, version: number): string {
  return version === 1 ? sha256(text) : sha256(JSON.stringify([version, text]));
}

/** True when a stored state snapshot's body (and version) still hashes to its address. */
export function snapshotIntact(snapshot: { hash: string; body: string; version?: number }): boolean {
  return stateAddress(snapshot.body, snapshot.version ?? 1) === snapshot.hash;
}

/** True when a tool call's completion (if any) still matches the hash binding it to the call. */
export function toolResultIntact(t: ToolRow): boolean {
  if (t.status === null) return true;
  const completion = { entryId: t.id, status: t.status, result: t.result, error: t.error, completedAt: t.completedAt! };
  return toolResultHash(t.hash, completion) === t.resultHash;
}

/** A checkpoint's checksum as if no one owned it: what an export carries, since the owner is not exported. */
export function portableChecksum(c: Omit<CheckpointRow, "seq" | "checksum" | "stateId">, stateHash: string): string {
  return checkpointChecksum({ ...c, userId: "" }, stateHash);
}

/** A checkpoint's checksum covers its fields, its state and the hash of its history. */
export function checkpointChecksum(c: Omit<CheckpointRow, "seq" | "checksum" | "stateId">, stateHash: string): string {
  return sha256(
    JSON.stringify([
      c.id,
      c.sessionId,
      c.branchId,
      c.position,
      c.name,
      c.auto,
      c.metadata,
      c.userId,
      stateHash,
      c.headHash,
      c.createdAt,
      c.expiresAt,
    ]),
  );
}
