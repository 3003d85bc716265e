// A page of a per-user listing: the rows, and the keyset cursor of the next page (null on the last).
import type { Page } from "../../models/types.js";
import { encodeCursor } from "./cursor.js";

export const DEFAULT_LIMIT = 20;

export function page<T, R extends { seq: number }>(kind: "sessions" | "checkpoints", rows: R[], limit: number, map: (r: R) => T): Page<T> {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return { items: items.map(map), nextCursor: more ? encodeCursor(kind, [items[items.length - 1]!.seq]) : null };
}
