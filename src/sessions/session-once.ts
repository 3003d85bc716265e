// A session made once per key, however many callers ask at once (servers on one database): its id follows from the
// key, and its creation finds the session a first caller made under that id's write lock.
import { createHash } from "node:crypto";
import type { CreateSessionInput } from "../models/inputs.js";
import type { Step, Tx } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { newSessionFields, writeNewSession } from "./create-session.js";

/** The id of `userId`'s session of `key`: "ses_" and 22 base-36 digits, as a made id has (it does not sort by time). */
export function onceSessionId(userId: string, key: string): string {
  const hash = BigInt(
    `0x${createHash("sha256")
      .update(JSON.stringify([userId, key]))
      .digest("hex")
      .slice(0, 30)}`,
  );
  return `ses_${hash.toString(36).padStart(22, "0").slice(-22)}`;
}

/** The user's session of `key` (see `onceSessionId`), created with `input` unless it exists; `created` tells which. */
export async function createSessionOnce(
  ctx: EngineContext,
  input: CreateSessionInput,
  key: string,
): Promise<{ ref: SessionRef; created: boolean }> {
  const fields = newSessionFields(ctx, input, "input");
  const id = onceSessionId(fields.userId, key);
  const created = await ctx.store.write({ sessionId: id }, (tx) => createOnceUnit(ctx, tx, fields, id));
  return { ref: { id, userId: fields.userId }, created };
}

function* createOnceUnit(ctx: EngineContext, tx: Tx, fields: ReturnType<typeof newSessionFields>, id: string): Step<boolean> {
  if (yield* tx.getSession(id)) return false;
  yield* writeNewSession(ctx, tx, fields, id);
  return true;
}
