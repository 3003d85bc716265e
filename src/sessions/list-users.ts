// Operator listings, not scoped to a user (like verify and prune): every user's sessions, and the users themselves.
import { z } from "zod";
import { ValidationError } from "../models/errors.js";
import { cursor, parseInput } from "../models/inputs.js";
import type { Page, SessionInfo } from "../models/types.js";
import type { EngineContext } from "./context.js";
import { decodeCursor, encodeCursor } from "./cursor.js";
import { toSessionInfo } from "./rows.js";

/** A user as `fp.listUsers` shows one. */
export interface UserInfo {
  userId: string;
  /** How many sessions the user owns. */
  sessions: number;
  /** When one of them was last updated (as their `info().updatedAt`). */
  updatedAt: Date;
}

const DEFAULT_LIMIT = 20;
const pageInput = z.strictObject({
  limit: z.number().int().min(1).max(1000).optional(),
  cursor: cursor.nullable().optional(),
});
export const listAllSessionsInput = pageInput.extend({ all: z.literal(true) });
export type ListAllSessionsInput = z.input<typeof listAllSessionsInput>;
export type ListUsersInput = z.input<typeof pageInput>;

/** Every user's sessions, newest first; the cursor is the same kind as a user's session listing (a row's place). */
export async function listAllSessions(ctx: EngineContext, input: ListAllSessionsInput): Promise<Page<SessionInfo>> {
  const o = parseInput(listAllSessionsInput, input, "listSessions");
  const limit = o.limit ?? DEFAULT_LIMIT;
  const before = o.cursor == null ? undefined : decodeCursor("sessions", o.cursor)[0];
  const rows = await ctx.store.query(() => ctx.store.listAllSessions(before, limit + 1));
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return { items: items.map(toSessionInfo), nextCursor: more ? encodeCursor("sessions", [items[items.length - 1]!.seq]) : null };
}

// Users page by id, so their cursor holds a user id: a tag and the id, base64url, like the other listings' cursors.
const USERS_TAG = "u";
const encodeUserCursor = (userId: string) => Buffer.from(JSON.stringify([USERS_TAG, userId])).toString("base64url");
function decodeUserCursor(text: string): string {
  let key: unknown;
  const bytes = Buffer.from(text, "base64url");
  try {
    key = bytes.toString("base64url") === text ? JSON.parse(bytes.toString("utf8")) : undefined;
  } catch {
    key = undefined;
  }
  if (!(Array.isArray(key) && key.length === 2 && key[0] === USERS_TAG && typeof key[1] === "string" && key[1] !== "")) {
    throw new ValidationError("cursor", "is not a cursor this listing returned (not a users cursor)");
  }
  return key[1] as string;
}

/** The users that own sessions, by id, with how many sessions each has and when one was last updated. */
export async function listUsers(ctx: EngineContext, input: ListUsersInput): Promise<Page<UserInfo>> {
  const o = parseInput(pageInput, input, "listUsers");
  const limit = o.limit ?? DEFAULT_LIMIT;
  const after = o.cursor == null ? undefined : decodeUserCursor(o.cursor);
  const rows = await ctx.store.query(() => ctx.store.listUsers(after, limit + 1));
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return {
    items: items.map((r) => ({ userId: r.userId, sessions: r.sessions, updatedAt: new Date(r.updatedAt) })),
    nextCursor: more ? encodeUserCursor(items[items.length - 1]!.userId) : null,
  };
}
