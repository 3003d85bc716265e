// message: one message of a session by id, on any of its branches.
import type { Message } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession, sessionMessage } from "./core/owned.js";
import { toMessage } from "./core/rows.js";

export async function message(ctx: EngineContext, ref: SessionRef, messageId: string): Promise<Message> {
  return ctx.store.read(function* (tx) {
    const session = yield* ownedSession(tx, ref.id, ref.userId);
    return toMessage((yield* sessionMessage(tx, session, messageId)).message);
  });
}
