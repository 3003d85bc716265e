// What a ForkpointSaver keeps of each thread it has read verified or written itself, so that a read reads only what is new.
// The lineage (segments, and per entry what the hash chain goes on from) and its messages as serialized item texts. A
// read then reads, hashes and converts only the entries it does not hold (entries never change) and parses the list
// once. Bounded; the least recently used threads go first.
import type { JsonValue } from "../models/json.js";
import type { EntryRow, LineageSegment } from "../store/port/index.js";
import { toMessage, type Head, type VerifiedLineage } from "../sessions/langgraph-bridge.js";
import { fromMessage } from "./messages.js";
import { WeightedLru } from "./weighted-lru.js";

/** A thread's verified lineage and the texts of the messages on it. */
export interface VerifiedItems {
  lineage: VerifiedLineage;
  texts: string[];
  /** Some item is stored in a non-JSON serializer's form (`{ __lg_type, base64 }`): the texts are revived one by one. */
  binary: boolean;
  /** Every text is plain JSON (`isPlainText`): LangGraph's JSON serializer would give back exactly what JSON.parse does. */
  plain: boolean;
}

/**
 * Whether LangGraph's `JsonPlusSerializer` reads `text` (compact JSON, as JSON.stringify writes it) back as JSON.parse
 * does: its reviver only turns objects with an `lc` key into something else, and copies the rest key by key (where a
 * `__proto__` key would set a prototype instead). `"lc":` appears in such a text only as that key: inside a string
 * every quote is escaped.
 */
export const isPlainText = (text: string): boolean => !text.includes('"lc":') && !text.includes('"__proto__":');

/** An item a non-JSON serializer wrote, kept as its type and base64 bytes. */
export const isBinaryItem = (x: JsonValue): x is { __lg_type: string; base64: string } =>
  typeof x === "object" && x !== null && !Array.isArray(x) && typeof x.__lg_type === "string" && typeof x.base64 === "string";

/** Appends `rows` to `items`: their chain links, and the texts of the messages among them. */
function append(items: VerifiedItems, rows: EntryRow[]): VerifiedItems {
  for (const e of rows) {
    items.lineage.links.push({ hash: e.hash, stateId: e.stateId, msgCount: e.msgCount });
    if (e.kind !== "message") continue;
    const item = fromMessage(toMessage(e));
    items.binary ||= isBinaryItem(item);
    const text = JSON.stringify(item);
    items.plain &&= isPlainText(text);
    items.texts.push(text);
  }
  return items;
}

/** A new `VerifiedItems`: `known`'s first `shared` entries (none when undefined), then `rows`; `segments` describe it. */
function grow(known: VerifiedItems | undefined, shared: number, segments: LineageSegment[], rows: EntryRow[]): VerifiedItems {
  const links = known ? known.lineage.links.slice(0, shared) : [];
  const sharedMessages = links.length === 0 ? 0 : links[links.length - 1]!.msgCount;
  const texts = known ? known.texts.slice(0, sharedMessages) : [];
  const kept = known !== undefined && sharedMessages > 0;
  // Flags of the whole kept list, which only err on the safe side for its prefix (revived one by one, or by the serializer).
  return append({ lineage: { segments, links }, texts, binary: kept && known.binary, plain: !kept || known.plain }, rows);
}

export class VerifiedItemsCache {
  /** Weighed by their texts when last remembered (they grow in place, and are remembered again then). */
  readonly #items: WeightedLru<VerifiedItems>;

  /** `maxMessages`: how many messages all threads together may keep (each as a text, plus 3 fields of its entry). */
  constructor(readonly maxMessages = 200_000) {
    this.#items = new WeightedLru(maxMessages);
  }

  get(sessionId: string): VerifiedItems | undefined {
    return this.#items.peek(sessionId);
  }

  delete(sessionId: string): void {
    this.#items.delete(sessionId);
  }

  /**
   * After a verified read of a checkpoint (`readVerifiedAfter` given `known`): its items, which it keeps, unless the
   * checkpoint is an older point of the lineage already kept (`list` walks back along it), which stays as it is.
   */
  read(
    sessionId: string,
    known: VerifiedItems | undefined,
    read: { shared: number; segments: LineageSegment[]; fresh: EntryRow[] },
  ): VerifiedItems {
    const grown = grow(known, read.shared, read.segments, read.fresh);
    const within = known !== undefined && read.fresh.length === 0 && read.shared <= known.lineage.links.length;
    this.#remember(sessionId, within ? known : grown);
    return grown;
  }

  /**
   * After a put's transaction committed: the entries it wrote after `from` (hashed by this saver), when they continue
   * the lineage kept; otherwise nothing (the next read catches up). `segments` are the new lineage's, when the rows
   * are on another branch than the kept lineage's last. Appends in place: whoever holds a `VerifiedItems` only ever
   * reads a prefix of it, cut by the lineage it described then.
   */
  written(sessionId: string, from: Head, wrote: { segments: LineageSegment[] | null; rows: EntryRow[] }): void {
    const known = this.#items.peek(sessionId);
    if (!known) {
      if (from.position === 0 && wrote.segments) this.#remember(sessionId, grow(undefined, 0, wrote.segments, wrote.rows));
      return;
    }
    const links = known.lineage.links;
    if (links.length !== from.position || (from.position > 0 && links[from.position - 1]!.hash !== from.hash)) return;
    if (wrote.rows.length > 0) {
      const last = known.lineage.segments.at(-1);
      const to = from.position + wrote.rows.length;
      if (last?.branchId === wrote.rows[0]!.branchId)
        known.lineage.segments = [...known.lineage.segments.slice(0, -1), { ...last, upTo: to }];
      else if (wrote.segments) known.lineage.segments = wrote.segments;
      else return;
      append(known, wrote.rows);
    }
    this.#remember(sessionId, known);
  }

  #remember(sessionId: string, v: VerifiedItems): void {
    this.#items.set(sessionId, v, v.texts.length);
  }
}
