// listSessions: a user's sessions, newest first, keyset-paginated, each with its last message (one statement a page).
import { listSessionsInput, parseOptions, type ListSessionsInput } from "../models/inputs.js";
import type { Page, SessionListItem } from "../models/types.js";
import type { EngineContext } from "./core/context.js";
import { decodeCursor } from "./core/cursor.js";
import { DEFAULT_LIMIT, page } from "./core/page.js";
import { toSessionListItem } from "./core/rows.js";

export async function listSessions(ctx: EngineContext, input: ListSessionsInput): Promise<Page<SessionListItem>> {
  const o = parseOptions(listSessionsInput, input, "options");
  const limit = o.limit ?? DEFAULT_LIMIT;
  const before = o.cursor == null ? undefined : decodeCursor("sessions", o.cursor)[0];
  const rows = await ctx.store.query((tx) => tx.listSessions(o.userId, before, limit + 1));
  return page("sessions", rows, limit, toSessionListItem);
}
