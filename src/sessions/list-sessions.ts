// listSessions: a user's sessions (or, for operators, every user's), newest first, keyset-paginated, each with its last
// message (one statement a page).
import { z } from "zod";
import { listSessionsInput, parseOptions, type ListSessionsInput } from "../models/inputs.js";
import type { Page, SessionListItem } from "../models/types.js";
import { readingInput } from "../models/json.js";
import type { EngineContext } from "./core/context.js";
import { decodeCursor, encodeCursor } from "./core/cursor.js";
import { DEFAULT_LIMIT, page } from "./core/page.js";
import { toSessionListItem } from "./core/rows.js";
import { pageInput } from "./list-users.js";

export const listAllSessionsInput = pageInput.extend({ all: z.literal(true) });
export type ListAllSessionsInput = z.input<typeof listAllSessionsInput>;

export async function listSessions(ctx: EngineContext, input: ListSessionsInput | ListAllSessionsInput): Promise<Page<SessionListItem>> {
  if (readingInput(() => typeof input === "object" && input !== null && "all" in input, "options"))
    return listAllSessions(ctx, input as ListAllSessionsInput);
  const o = parseOptions(listSessionsInput, input, "options");
  const limit = o.limit ?? DEFAULT_LIMIT;
  const before = o.cursor == null ? undefined : decodeCursor("sessions", o.cursor)[0];
  const rows = await ctx.store.query((tx) => tx.listSessions(o.userId, before, limit + 1));
  return page("sessions", rows, limit, toSessionListItem);
}

/** Every user's sessions, newest first; the cursor is the same kind as a user's session listing (a row's place). */
async function listAllSessions(ctx: EngineContext, input: ListAllSessionsInput): Promise<Page<SessionListItem>> {
  const o = parseOptions(listAllSessionsInput, input, "options");
  const limit = o.limit ?? DEFAULT_LIMIT;
  const before = o.cursor == null ? undefined : decodeCursor("sessions", o.cursor)[0];
  const rows = await ctx.store.query((tx) => tx.listAllSessions(before, limit + 1));
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return { items: items.map(toSessionListItem), nextCursor: more ? encodeCursor("sessions", [items[items.length - 1]!.seq]) : null };
}
