// Expiry: checkpoints end their lives now, each checksum rewritten to cover the new expiry (it covers `expiresAt`).
import type { Step, Tx } from "../../store/port/index.js";
import { EMPTY_STATE_HASH, checkpointChecksum } from "./hashes.js";

/**
 * Expires these checkpoints at `now`. A checksum that matched before is recomputed with the new expiry, so that verify,
 * export and clone (which read an expired fork point) still find it intact; one that did not match is left as it was,
 * so that expiring never hides damage.
 */
export function* expireCheckpointsNow(tx: Tx, ids: string[], now: number): Step<void> {
  const expired: { id: string; checksum: string }[] = [];
  for (const id of ids) {
    const cp = yield* tx.getCheckpoint(id);
    if (!cp) continue;
    const stateHash = cp.stateId === null ? EMPTY_STATE_HASH : (yield* tx.getSnapshot(cp.stateId))?.hash;
    const intact = stateHash !== undefined && checkpointChecksum(cp, stateHash) === cp.checksum;
    expired.push({ id, checksum: intact ? checkpointChecksum({ ...cp, expiresAt: now }, stateHash) : cp.checksum });
  }
  yield* tx.expireCheckpoints(expired, now);
}
