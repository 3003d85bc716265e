// timeline: everything that happened in a session, across branches, newest first.
import type { Tx } from "../store/port/index.js";
import { z } from "zod";
import { cursor, parseOptions } from "../models/inputs.js";
import type { Page, TimelineItem } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { decodeCursor, encodeCursor } from "./core/cursor.js";
import { ownedSession } from "./core/owned.js";

const timelineInput = z.strictObject({ limit: z.number().int().min(1).max(1000).optional(), cursor: cursor.nullable().optional() });

function summary(kind: string, detail: string | null): string {
  switch (kind) {
    case "message":
      return `${detail} message`;
    case "tool":
      return `called ${detail}`;
    case "state":
      return "state changed";
    case "checkpoint":
      return detail ? `checkpoint "${detail}"` : "checkpoint";
    default:
      return detail ?? kind;
  }
}

export async function timeline(
  ctx: EngineContext,
  ref: SessionRef,
  options: z.input<typeof timelineInput> = {},
): Promise<Page<TimelineItem>> {
  const o = parseOptions(timelineInput, options, "options");
  const limit = o.limit ?? 50;
  const before = o.cursor == null ? undefined : decodeCursor("timeline", o.cursor);
  const rows = await ctx.store.read((tx) => timelineUnit(tx, ref, before, limit, ctx.now()));
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  const last = items[items.length - 1];
  return {
    items: items.map((r) => ({
      kind: r.kind as TimelineItem["kind"],
      id: r.refId,
      branchId: r.branchId,
      at: new Date(r.createdAt),
      summary: summary(r.kind, r.detail),
    })),
    nextCursor: more && last ? encodeCursor("timeline", [last.createdAt, last.source, last.seq]) : null,
  };
}

function* timelineUnit(tx: Tx, ref: SessionRef, before: readonly [number, string, number] | undefined, limit: number, now: number) {
  yield* ownedSession(tx, ref.id, ref.userId);
  // Expired checkpoints are gone from reads now, as `listCheckpoints` and `restore` have them (prune only deletes them).
  return yield* tx.timeline(ref.userId, ref.id, before && { createdAt: before[0], source: before[1], seq: before[2] }, limit + 1, now);
}
