// Per-user listings: sessions and checkpoints, newest first, keyset-paginated.
import {
  listCheckpointsInput,
  listSessionsInput,
  parseInput,
  type ListCheckpointsInput,
  type ListSessionsInput,
} from "../models/inputs.js";
import type { Checkpoint, Page, SessionInfo } from "../models/types.js";
import type { EngineContext } from "./context.js";
import { decodeCursor, encodeCursor } from "./cursor.js";
import { toCheckpoint, toSessionInfo } from "./rows.js";

const DEFAULT_LIMIT = 20;

function page<T, R extends { seq: number }>(kind: "sessions" | "checkpoints", rows: R[], limit: number, map: (r: R) => T): Page<T> {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return { items: items.map(map), nextCursor: more ? encodeCursor(kind, [items[items.length - 1]!.seq]) : null };
}

export async function listSessions(ctx: EngineContext, input: ListSessionsInput): Promise<Page<SessionInfo>> {
  const o = parseInput(listSessionsInput, input, "listSessions");
  const limit = o.limit ?? DEFAULT_LIMIT;
  const before = o.cursor == null ? undefined : decodeCursor("sessions", o.cursor)[0];
  const rows = await ctx.store.query(function* (tx) {
    return yield* tx.listSessions(o.userId, before, limit + 1);
  });
  return page("sessions", rows, limit, toSessionInfo);
}

export async function listCheckpoints(ctx: EngineContext, input: ListCheckpointsInput): Promise<Page<Checkpoint>> {
  const o = parseInput(listCheckpointsInput, input, "listCheckpoints");
  const limit = o.limit ?? DEFAULT_LIMIT;
  const before = o.cursor == null ? undefined : decodeCursor("checkpoints", o.cursor)[0];
  const rows = await ctx.store.query(function* (tx) {
    return yield* tx.listCheckpoints({
      userId: o.userId,
      sessionId: o.sessionId,
      name: o.name,
      since: o.since?.getTime(),
      until: o.until?.getTime(),
      auto: o.auto,
      beforeSeq: before,
      now: ctx.now(),
      limit: limit + 1,
    });
  });
  return page("checkpoints", rows, limit, toCheckpoint);
}
