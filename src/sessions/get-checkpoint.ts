// fp.getCheckpoint: one checkpoint of a user, by id alone (its session is found from it), as listings show it.
import type { Tx } from "../store/port/index.js";
import { NotFoundError } from "../models/errors.js";
import { idSchema, parseInput, userScope, parseOptions } from "../models/inputs.js";
import type { Checkpoint } from "../models/types.js";
import type { EngineContext } from "./core/context.js";
import { ownedSession, sessionCheckpoint } from "./core/owned.js";
import { toCheckpoint } from "./core/rows.js";

export async function getCheckpoint(ctx: EngineContext, checkpointId: string, scope: { userId: string }): Promise<Checkpoint> {
  const id = parseInput(idSchema, checkpointId, "checkpointId");
  const { userId } = parseOptions(userScope, scope, "scope");
  return ctx.store.read((tx) => getCheckpointUnit(tx, id, userId, ctx));
}

function* getCheckpointUnit(tx: Tx, id: string, userId: string, ctx: EngineContext) {
  const row = yield* tx.getCheckpoint(id);
  // Another user's checkpoint, and one whose session is gone, look like an unknown id.
  if (!row || row.userId !== userId) throw new NotFoundError("checkpoint", id);
  let session;
  try {
    session = yield* ownedSession(tx, row.sessionId, userId);
  } catch {
    throw new NotFoundError("checkpoint", id);
  }
  return toCheckpoint(yield* sessionCheckpoint(tx, session, id, ctx.now()));
}
