// History pages for the CLI: the last `limit` messages before a position, oldest first, with an opaque cursor.
// The engine's history() returns the whole lineage; the CLI pages it here (a later engine history({ limit, before })
// can replace this without changing what the command prints).
import type { Message, Page } from "../index.js";
import { ValidationError } from "../models/errors.js";

const TAG = "h";

export function encodeHistoryCursor(before: number): string {
  return Buffer.from(JSON.stringify([TAG, before])).toString("base64url");
}

export function decodeHistoryCursor(cursor: string): number {
  let key: unknown;
  const bytes = Buffer.from(cursor, "base64url");
  try {
    key = bytes.toString("base64url") === cursor ? JSON.parse(bytes.toString("utf8")) : undefined;
  } catch {
    key = undefined;
  }
  if (!(Array.isArray(key) && key.length === 2 && key[0] === TAG && Number.isSafeInteger(key[1]) && (key[1] as number) > 0)) {
    throw new ValidationError("cursor", "is not a cursor that history printed");
  }
  return key[1] as number;
}

/** The last `limit` messages before position `before` (all when absent), oldest first; the cursor leads further back. */
export function historyPage(messages: Message[], limit: number, before: number | undefined): Page<Message> {
  const eligible = before === undefined ? messages : messages.filter((m) => m.position < before);
  const items = eligible.slice(Math.max(0, eligible.length - limit));
  const more = eligible.length > items.length;
  return { items, nextCursor: more ? encodeHistoryCursor(items[0]!.position) : null };
}
