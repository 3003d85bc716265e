// getSession: a handle's session and owner, checked to exist and belong to the user, with the handle's state schema.
import { idSchema, parseInput, parseOptions, userScope } from "../models/inputs.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import type { SessionStateOptions } from "./core/session-state.js";
import { ownedSession } from "./core/owned.js";
import { withSessionState } from "./core/session-state.js";

export async function getSession(
  ctx: EngineContext,
  sessionId: string,
  scope: { userId: string } & SessionStateOptions,
): Promise<{ ctx: EngineContext; ref: SessionRef }> {
  const id = parseInput(idSchema, sessionId, "sessionId");
  const { ctx: own, rest } = withSessionState(ctx, scope);
  const { userId } = parseOptions(userScope, rest, "scope");
  await ctx.store.read((tx) => ownedSession(tx, id, userId));
  return { ctx: own, ref: { id, userId } };
}
