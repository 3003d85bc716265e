// An edit's role as a request compares it: left out, it is the original message's, which only the unit can read.
import type { Message } from "../../models/types.js";
import type { Step, Tx } from "../../store/port/index.js";

/**
 * Whether the message an edit wrote has the role a retry asks for (`role`, or the original's when left out): an edit
 * that spells out its default role and one that leaves it out are the same call. Entries never change, so the original
 * read now has the role it had then.
 */
export function* sameEditRole(tx: Tx, written: Message | undefined, messageId: string, role: string | null | undefined): Step<boolean> {
  const wanted = role ?? (yield* tx.getEntry(messageId))?.role ?? null;
  return written !== undefined && written.role === wanted;
}
