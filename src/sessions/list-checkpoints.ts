// listCheckpoints: a user's checkpoints across sessions, filtered, newest first, keyset-paginated.
import { listCheckpointsInput, parseOptions, type ListCheckpointsInput } from "../models/inputs.js";
import type { Checkpoint, Page } from "../models/types.js";
import type { EngineContext } from "./core/context.js";
import { decodeCursor } from "./core/cursor.js";
import { DEFAULT_LIMIT, page } from "./core/page.js";
import { toCheckpoint } from "./core/rows.js";

export async function listCheckpoints(ctx: EngineContext, input: ListCheckpointsInput): Promise<Page<Checkpoint>> {
  const o = parseOptions(listCheckpointsInput, input, "filter");
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
