// The documented size limits every payload is checked against (overridable in `openForkpoint`).

/** Limits on what one call may store. Over a limit is a `PayloadTooLargeError` (code `PAYLOAD_TOO_LARGE`). */
export interface Limits {
  /** Largest JSON payload (a message's content, a state document, tool args or result), in UTF-8 bytes. Default 16 MiB. */
  maxPayloadBytes: number;
  /** Deepest nesting of arrays and objects in a payload. Default 2,000. */
  maxDepth: number;
  /** Longest id, userId, role, name or title string, in characters. Default 512. */
  maxStringField: number;
  /** Most messages in one `append` call. Default 10,000. */
  maxBatch: number;
}

export const DEFAULT_LIMITS: Limits = Object.freeze({
  maxPayloadBytes: 16 * 1024 * 1024,
  maxDepth: 2_000,
  maxStringField: 512,
  maxBatch: 10_000,
});

/** The highest state schema version (`stateVersion`, and a state's in an imported document): PostgreSQL keeps it in an integer. */
export const MAX_STATE_VERSION = 1_000_000;
