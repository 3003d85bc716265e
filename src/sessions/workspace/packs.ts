// Stored snapshots' contents: compressed together in packs (small ones inline), read back and checked by their hashes.
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { LRUCache } from "lru-cache";
import { IntegrityError } from "../../models/errors.js";
import type { Step, Store, Tx } from "../../store/port/index.js";
import { sha256 } from "../integrity/hashes.js";

/**
 * How packs are compressed. Measured on the workspace bench's code-like text, 64 KB groups: deflate (level 6) 3.72×,
 * zstd 3.31× (level 3) to 3.67× (level 9), brotli 3.52× (quality 5); deflate is in every Node forkpoint runs on (zstd
 * only from 22.15), so a database stays readable by each of them.
 */
export const PACK_CODEC = "deflate-raw";
/** Contents are grouped into packs of about this many bytes: neighbours compress together, one file reads one pack. */
const PACK_BYTES = 64 * 1024;
/** Contents this small are stored as they are: a pack gains nothing on them. */
export const INLINE_MAX = 128;

/** Uncompressed packs by id, so that the files one pack holds decompress it once. */
export const packCache = () => new LRUCache<number, Buffer>({ maxSize: 8 << 20, sizeCalculation: (b) => Math.max(1, b.length) });
export type PackCache = ReturnType<typeof packCache>;

/**
 * A database's cache of uncompressed packs (ids are a database's own, and never reused: a pack is immutable): restores
 * back and forth (undo, redo) decompress each pack once. Every content taken from it is still checked by its hash.
 */
const storePacks = new WeakMap<Store, PackCache>();
export function packCacheOf(store: Store): PackCache {
  let cache = storePacks.get(store);
  if (!cache) storePacks.set(store, (cache = packCache()));
  return cache;
}

/**
 * Stored contents by hash, each checked against its hash: a damaged or missing one is an IntegrityError. `packs`: the
 * operation's cache of uncompressed packs (pack ids are a database's own: never shared between databases).
 */
export function* readBlobs(tx: Tx, hashes: Iterable<string>, packs: PackCache = packCache()): Step<Map<string, Buffer>> {
  const wanted = [...new Set(hashes)];
  const out = new Map<string, Buffer>();
  for (let i = 0; i < wanted.length; i += 500) {
    const rows = yield* tx.blobRows(wanted.slice(i, i + 500));
    // The batch's packs are held here while it reads them: those it decompresses can push those the cache held out.
    const held = new Map<number, Buffer>();
    const missing: number[] = [];
    for (const id of new Set(rows.filter((r) => r.packId !== null).map((r) => Number(r.packId)))) {
      const cached = packs.get(id);
      if (cached) held.set(id, cached);
      else missing.push(id);
    }
    for (const p of yield* tx.getPacks(missing)) {
      try {
        if (p.codec !== PACK_CODEC) throw new Error(`unknown codec ${p.codec}`);
        const raw = inflateRawSync(p.content);
        held.set(Number(p.id), raw);
        packs.set(Number(p.id), raw);
      } catch {
        // Left out: its contents are then reported missing or damaged below, by hash.
      }
    }
    for (const r of rows) {
      let content: Buffer | undefined = r.content;
      if (r.packId !== null) {
        const pack = held.get(Number(r.packId));
        const end = Number(r.packOffset) + Number(r.size);
        content = pack && end <= pack.length ? pack.subarray(Number(r.packOffset), end) : undefined;
      }
      if (content && sha256(content) === r.hash) out.set(r.hash, content);
    }
  }
  for (const h of wanted) if (!out.has(h)) throw new IntegrityError(`stored file content ${h} is missing or does not match its hash`);
  return out;
}

/** Contents grouped as they are stored: tiny ones alone, the others in packs of about `PACK_BYTES`. */
function groupsOf(contents: Iterable<[string, Buffer]>): { inline: [string, Buffer][]; packs: [string, Buffer][][] } {
  const inline: [string, Buffer][] = [];
  const packs: [string, Buffer][][] = [];
  let group: [string, Buffer][] = [];
  let size = 0;
  for (const [hash, content] of contents) {
    if (content.length <= INLINE_MAX) {
      inline.push([hash, content]);
      continue;
    }
    if (size > 0 && size + content.length > PACK_BYTES) (packs.push(group), (group = []), (size = 0));
    group.push([hash, content]);
    size += content.length;
  }
  if (group.length > 0) packs.push(group);
  return { inline, packs };
}

/** A pack's uncompressed content and where each of its contents is in it. */
function layout(group: [string, Buffer][]): { raw: Buffer; blobs: { hash: string; offset: number; size: number }[] } {
  const blobs: { hash: string; offset: number; size: number }[] = [];
  let offset = 0;
  for (const [hash, content] of group) {
    blobs.push({ hash, offset, size: content.length });
    offset += content.length;
  }
  return {
    raw:
      group.length === 1
        ? group[0]![1]
        : Buffer.concat(
            group.map(([, c]) => c),
            offset,
          ),
    blobs,
  };
}

const DEFLATE = { level: 6 } as const;

/** Stores contents as they are and packs already compressed. */
function* insertPacks(
  tx: Tx,
  inline: [string, Buffer][],
  packs: { content: Buffer; blobs: { hash: string; offset: number; size: number }[] }[],
): Step<void> {
  for (const [hash, content] of inline) yield* tx.insertBlob(hash, content);
  for (const p of packs) yield* tx.insertPack(PACK_CODEC, p.content, p.blobs);
}

/** Contents waiting to be stored, each once: `persist` stores them from outside a transaction, `flush` inside one. */
export class PackWriter {
  #pending = new Map<string, Buffer>();
  #bytes = 0;

  add(hash: string, content: Buffer): void {
    if (this.#pending.has(hash)) return;
    this.#pending.set(hash, content);
    this.#bytes += content.length;
  }

  get pendingBytes(): number {
    return this.#bytes;
  }

  #take(): Map<string, Buffer> {
    const batch = this.#pending;
    this.#pending = new Map();
    this.#bytes = 0;
    return batch;
  }

  /**
   * Stores what waits and is not stored yet (asked first), in packs compressed before the write transaction. On this
   * thread: compressing on the thread pool was faster (8.2 against 10.9 s for the bench's 164 MB) but kept 25–40 MB
   * more alive (zlib handles and their buffers until collected), and memory is what must stay bounded.
   */
  async persist(store: Store, sessionId: string): Promise<void> {
    const batch = this.#take();
    if (batch.size === 0) return;
    const present = new Set(await store.read((tx) => tx.presentBlobs([...batch.keys()])));
    const { inline, packs } = groupsOf([...batch].filter(([h]) => !present.has(h)));
    batch.clear();
    const compressed = packs.map((group) => {
      const { raw, blobs } = layout(group);
      return { content: deflateRawSync(raw, DEFLATE), blobs };
    });
    await store.write({ sessionId }, (tx) => insertPacks(tx, inline, compressed));
  }

  /** Stores what waits and is not stored yet (asked in the same transaction), in packs. */
  *flush(tx: Tx): Step<void> {
    const batch = this.#take();
    if (batch.size === 0) return;
    const present = new Set(yield* tx.presentBlobs([...batch.keys()]));
    const { inline, packs } = groupsOf([...batch].filter(([h]) => !present.has(h)));
    for (const [hash, content] of inline) yield* tx.insertBlob(hash, content);
    for (const group of packs) {
      const { raw, blobs } = layout(group);
      yield* tx.insertPack(PACK_CODEC, deflateRawSync(raw, DEFLATE), blobs);
    }
  }
}
