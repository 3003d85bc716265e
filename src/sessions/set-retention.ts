// setRetention: stores a session's retention policy (or clears it) and applies it to the checkpoints it has now.
import type { Tx } from "../store/port/index.js";
import { z } from "zod";
import { duration, parseOptions } from "../models/inputs.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession } from "./core/owned.js";
import { retainAll, type StoredRetention } from "./log/retention.js";

const retentionInput = z
  .strictObject({
    keepFirst: z.boolean().optional(),
    keepLast: z.number().int("must be an integer").min(0, "must not be negative").max(Number.MAX_SAFE_INTEGER).optional(),
    onePerName: z.boolean().optional(),
    keepFor: duration.optional(),
  })
  .nullable();

/**
 * A session's retention policy. A checkpoint stays while any rule keeps it: the session's first (`keepFirst`), one of
 * the last `keepLast` of its branch (each branch counts its own; over `keepLast`, automatic checkpoints expire before
 * manual ones), the newest of its name (`onePerName`; the unnamed ones count as one name), one made less than `keepFor`
 * ago ("7d", or ms), and always one a branch forks from. The others are expired, as with a TTL; a branch's newest
 * waits for the next checkpoint on that branch.
 */
export interface RetentionPolicy {
  keepFirst?: boolean;
  keepLast?: number;
  onePerName?: boolean;
  keepFor?: number | string;
}

/** Stores the policy and, in the same transaction, expires the checkpoints it does not keep. */
export async function setRetention(ctx: EngineContext, ref: SessionRef, input: RetentionPolicy | null): Promise<void> {
  const o = parseOptions(retentionInput, input, "policy");
  const empty = o === null || Object.values(o).every((v) => v === undefined);
  const stored: StoredRetention | null = empty
    ? null
    : { keepFirst: o.keepFirst ?? false, keepLast: o.keepLast ?? null, onePerName: o.onePerName ?? false, keepFor: o.keepFor ?? null };
  await ctx.store.write({ sessionId: ref.id }, (tx) => setRetentionUnit(tx, ref, stored, ctx));
}

function* setRetentionUnit(tx: Tx, ref: SessionRef, stored: StoredRetention | null, ctx: EngineContext) {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  const text = stored === null ? null : JSON.stringify(stored);
  yield* tx.setRetention(session.id, text, 0);
  yield* retainAll(tx, { ...session, retention: text, retentionAgedAt: 0 }, ctx.now());
}
