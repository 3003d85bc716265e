// Operator listings, not scoped to a user (like verify and prune): every user's sessions, and the users themselves.
import { z } from "zod";
import { cursor, parseOptions } from "../models/inputs.js";
import type { Page, SessionListItem } from "../models/types.js";
import type { EngineContext } from "./core/context.js";
import { decodeCursor, encodeCursor } from "./core/cursor.js";
import { toSessionListItem } from "./core/rows.js";

/** A user as `fp.listUsers` shows one. */
export interface UserInfo {
  userId: string;
  /** How many sessions the user owns. */
  sessions: number;
  /** When one of them was last updated (as their `info().updatedAt`). */
  updatedAt: Date;
}

const DEFAULT_LIMIT = 20;
const pageInput = z.strictObject({ limit: z.number().int().min(1).max(1000).optional(), cursor: cursor.nullable().optional() });
export const listAllSessionsInput = pageInput.extend({ all: z.literal(true) });
export type ListAllSessionsInput = z.input<typeof listAllSessionsInput>;
export type ListUsersInput = z.input<typeof pageInput>;

/** Every user's sessions, newest first; the cursor is the same kind as a user's session listing (a row's place). */
export async function listAllSessions(ctx: EngineContext, input: ListAllSessionsInput): Promise<Page<SessionListItem>> {
  const o = parseOptions(listAllSessionsInput, input, "options");
  const limit = o.limit ?? DEFAULT_LIMIT;
  const before = o.cursor == null ? undefined : decodeCursor("sessions", o.cursor)[0];
  const rows = await ctx.store.query((tx) => tx.listAllSessions(before, limit + 1));
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return { items: items.map(toSessionListItem), nextCursor: more ? encodeCursor("sessions", [items[items.length - 1]!.seq]) : null };
}

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
