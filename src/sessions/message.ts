// message: one message of a session by id, on any of its branches.
import type { Tx } from "../store/port/index.js";
import type { Message } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession, sessionMessage } from "./core/owned.js";
import { toMessage } from "./core/rows.js";

export async function message(ctx: EngineContext, ref: SessionRef, messageId: string): Promise<Message> {
  return ctx.store.read((tx) => messageUnit(tx, ref, messageId));
}

function* messageUnit(tx: Tx, ref: SessionRef, messageId: string) {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  return toMessage((yield* sessionMessage(tx, session, messageId)).message);
}
