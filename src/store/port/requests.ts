// The request ledger: per session, the request ids of the writes it applied, each with its arguments' fingerprint and
// the first call's answer, recorded in the transaction of the write.
import type { Step } from "./unit.js";

export interface RequestRow {
  sessionId: string;
  requestId: string;
  /** A hash of the verb and its arguments: the same id with other arguments is refused. */
  fingerprint: string;
  /** The first call's answer as the verb encodes it (ids and positions where the answer can be read back). */
  answer: string;
  createdAt: number;
  /** The checkpoint whose row keeps the request (a turn's; see `NewCheckpoint.request`), else absent. */
  checkpointId?: string | null;
}

export interface RequestsTx {
  /**
   * Records a request applied in this unit. When the session holds that request id already (in the ledger or on a
   * checkpoint's row), the unit fails with
   * `RequestTakenError` and writes nothing: at once, or at its COMMIT on a store that sends the insert with it.
   */
  insertRequest(row: RequestRow): Step<void>;
  /** The session's record of a request id, if it applied one: in the ledger, or on the row of the checkpoint it made. */
  getRequest(sessionId: string, requestId: string): Step<RequestRow | undefined>;
  /**
   * Forgets the session's records of `requestIds` (in the ledger and on checkpoints' rows; the checkpoints stay): a
   * failed guarded block's own requests, which a retry then applies again.
   */
  forgetRequests(sessionId: string, requestIds: readonly string[]): Step<void>;
}

/**
 * The unit tried to record a request id its session holds already (another call with that id committed first): the
 * store rolled it back. The engine answers from the ledger instead.
 */
export class RequestTakenError extends Error {
  override readonly name = "RequestTakenError";
  constructor(options?: { cause?: unknown }) {
    super("the session has applied this request id already", options);
  }
}

/**
 * The answer of a request kept on a checkpoint's row (`CheckpointRequest`) once the store moved it to the ledger's
 * table, as it does in the unit that deletes that checkpoint: the row's `answer` is `[first, count, expiresIn]`, and
 * this JSON array is `[[branchId, first, count] (or [] for no message), [id, sessionId, branchId, position, name, auto,
 * metadata (JSON), userId, checksum, createdAt, expiresAt], expiresIn]`, the checkpoint's fields taken from its row.
 */
export type KeptTurnAnswer = [
  messages: [] | [branchId: string, first: number, count: number],
  checkpoint: [
    id: string,
    sessionId: string,
    branchId: string,
    position: number,
    name: string | null,
    auto: boolean,
    metadata: unknown,
    userId: string,
    checksum: string,
    createdAt: number,
    expiresAt: number | null,
  ],
  expiresIn: number | null,
];
