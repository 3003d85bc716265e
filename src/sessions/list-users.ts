// listUsers: an operator listing, not scoped to a user (like verify and prune): the users that own sessions.
import { z } from "zod";
import { cursor, parseOptions } from "../models/inputs.js";
import type { Page } from "../models/types.js";
import type { EngineContext } from "./core/context.js";
import { decodeCursor, encodeCursor } from "./core/cursor.js";

/** A user as `fp.listUsers` shows one. */
export interface UserInfo {
  userId: string;
  /** How many sessions the user owns. */
  sessions: number;
  /** When one of them was last updated (as their `info().updatedAt`). */
  updatedAt: Date;
}

const DEFAULT_LIMIT = 20;
export const pageInput = z.strictObject({ limit: z.number().int().min(1).max(1000).optional(), cursor: cursor.nullable().optional() });
export type ListUsersInput = z.input<typeof pageInput>;

/** The users that own sessions, by id, with how many sessions each has and when one was last updated. */
export async function listUsers(ctx: EngineContext, input: ListUsersInput): Promise<Page<UserInfo>> {
  const o = parseOptions(pageInput, input, "options");
  const limit = o.limit ?? DEFAULT_LIMIT;
  const after = o.cursor == null ? undefined : decodeCursor("users", o.cursor)[0];
  const rows = await ctx.store.query((tx) => tx.listUsers(after, limit + 1));
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return {
    items: items.map((r) => ({ userId: r.userId, sessions: r.sessions, updatedAt: new Date(r.updatedAt) })),
    nextCursor: more ? encodeCursor("users", [items[items.length - 1]!.userId]) : null,
  };
}
