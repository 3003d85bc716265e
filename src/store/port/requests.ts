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
}

export interface RequestsTx {
  /**
   * Records a request applied in this unit. When the session holds that request id already, the unit fails with
   * `RequestTakenError` and writes nothing: at once, or at its COMMIT on a store that sends the insert with it.
   */
  insertRequest(row: RequestRow): Step<void>;
  /** The session's record of a request id, if it applied one. */
  getRequest(sessionId: string, requestId: string): Step<RequestRow | undefined>;
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
