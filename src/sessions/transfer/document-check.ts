// The checks of an export document that need no database: every link, hash and checksum recomputed from it.
import { IntegrityError, ValidationError } from "../../models/errors.js";
import { type ExportedBranch, type ExportedCheckpoint, type ExportedEntry, type SessionExport } from "../../models/session-export.js";
import {
  EMPTY_STATE_HASH,
  GENESIS_HASH,
  canonicalJson,
  entryHash,
  portableChecksum,
  stateAddress,
  toolResultHash,
} from "../integrity/hashes.js";
import { CHUNK_UNITS, type Slice } from "../maintenance/long-call.js";

/** A lineage position as the document gives it: what the entries after it are chained onto. */
export interface DocHead {
  position: number;
  hash: string;
  /** The state in effect there (null before the first state change). */
  stateHash: string | null;
  msgCount: number;
}

export const GENESIS: DocHead = { position: 0, hash: GENESIS_HASH, stateHash: null, msgCount: 0 };

/** Payload texts serialized (and size-checked) as the call is made, as the stored columns hold them. */
export interface PreparedEntry {
  doc: ExportedEntry;
  field: string;
  content: string | null;
  metadata: string | null;
  result: string | null;
  error: string | null;
  /** The lineage position this entry makes (set once its hash is checked). */
  head?: DocHead;
}

/**
 * The checks of a document that need no database: every link, hash and checksum, recomputed from the document alone
 * (a branch's lineage is its parent's, listed before it, up to its fork position, then its own entries). Runs as
 * slices (see `runSlices`); what it computes (state bodies, each entry's head) is what the write stores.
 */
export class DocumentCheck {
  readonly stateBodies = new Map<string, { body: string; version: number }>();
  readonly #doc: SessionExport;
  readonly #stateTexts: { hash: string; text: string; version?: number }[];
  readonly #checkpointMetadata: (string | null)[];
  /** Branches checked so far (a branch's parent must be listed, so checked, before it). */
  readonly #branches = new Map<string, ExportedBranch>();
  readonly #byBranch = new Map<string, PreparedEntry[]>();
  /** Own entries by branch and position, once checked. */
  readonly #at = new Map<string, Map<number, PreparedEntry>>();

  constructor(
    doc: SessionExport,
    entries: PreparedEntry[],
    stateTexts: { hash: string; text: string; version?: number }[],
    checkpointMetadata: (string | null)[],
  ) {
    this.#doc = doc;
    this.#stateTexts = stateTexts;
    this.#checkpointMetadata = checkpointMetadata;
    for (const e of entries) {
      const list = this.#byBranch.get(e.doc.branchId);
      if (list) list.push(e);
      else this.#byBranch.set(e.doc.branchId, [e]);
    }
    for (const list of this.#byBranch.values()) list.sort((x, y) => x.doc.position - y.doc.position);
  }

  /**
   * Every entry, branches interleaved as the document lists them (the order they were written in, by which a message's
   * versions are ordered), each branch's own in position order whatever order the document gives them in.
   */
  inWriteOrder(): PreparedEntry[] {
    const taken = new Map<string, number>();
    return this.#doc.entries.map((e) => {
      const n = taken.get(e.branchId) ?? 0;
      taken.set(e.branchId, n + 1);
      return this.#byBranch.get(e.branchId)![n]!;
    });
  }

  /** A branch's own entries in position order. */
  ownEntries(branchId: string): PreparedEntry[] {
    return this.#byBranch.get(branchId) ?? [];
  }

  /** A checkpoint as stored, but for its state id and checksum. */
  checkpointBase(c: ExportedCheckpoint, i: number, sessionId: string, userId: string) {
    return {
      id: c.id,
      sessionId,
      branchId: c.branchId,
      position: c.position,
      name: c.name,
      auto: c.auto,
      metadata: this.#checkpointMetadata[i]!,
      userId,
      headHash: c.headHash,
      createdAt: c.createdAt,
      expiresAt: c.expiresAt,
    };
  }

  *slices(): Generator<Slice> {
    const doc = this.#doc;
    for (const s of this.#stateTexts) {
      yield {
        units: 1,
        run: () => {
          const body = canonicalJson(JSON.parse(s.text));
          if (stateAddress(body, s.version ?? 1) !== s.hash)
            throw new IntegrityError(`state ${s.hash} of the document does not match its hash`);
          this.stateBodies.set(s.hash, { body, version: s.version ?? 1 });
        },
      };
    }
    for (const [i, b] of doc.branches.entries()) {
      let head = GENESIS;
      yield { units: 0, run: () => void (head = this.#branchBase(b, i)) };
      const own = this.ownEntries(b.id);
      for (let from = 0; from < own.length; from += CHUNK_UNITS) {
        const chunk = own.slice(from, from + CHUNK_UNITS);
        yield { units: chunk.length, run: () => void (head = this.#checkEntries(b, head, chunk)) };
      }
    }
    yield {
      units: 0,
      run: () => {
        const stray = [...this.#byBranch.keys()].find((id) => !this.#branches.has(id));
        if (stray !== undefined)
          throw new ValidationError("document.entries", `entries name branch ${stray}, which is not among the document's branches`);
      },
    };
    for (const [i, c] of doc.checkpoints.entries()) yield { units: 1, run: () => this.#checkCheckpoint(c, i) };
    yield {
      units: 0,
      run: () =>
        doc.events.forEach((e, i) => {
          if (!this.#branches.has(e.branchId))
            throw new ValidationError(`document.events[${i}].branchId`, `branch ${e.branchId} is not among the document's branches`);
        }),
    };
  }

  /** The entry at `position` of a checked branch's lineage (undefined at position 0). */
  #entryAt(branch: ExportedBranch, position: number): PreparedEntry | undefined {
    let b: ExportedBranch | undefined = branch;
    while (b && position > 0) {
      if (position > b.forkPosition) return this.#at.get(b.id)?.get(position);
      b = b.parentId === null ? undefined : this.#branches.get(b.parentId);
    }
    return undefined;
  }

  #stateOf(hash: string | null, field: string): string | null {
    if (hash !== null && !this.stateBodies.has(hash)) throw new ValidationError(field, `state ${hash} is not among the document's states`);
    return hash;
  }

  /** Checks where a branch starts; returns the head its first entry chains onto. */
  #branchBase(b: ExportedBranch, i: number): DocHead {
    const field = `document.branches[${i}]`;
    const parent = b.parentId === null ? undefined : this.#branches.get(b.parentId);
    if (i === 0 ? b.parentId !== null : !parent) {
      throw new ValidationError(
        `${field}.parentId`,
        i === 0 ? "the first branch must be the root (no parent)" : "must name a branch listed before it",
      );
    }
    let base = GENESIS;
    if (parent) {
      const anchor = this.#entryAt(parent, b.forkPosition);
      if (b.forkPosition > 0 && !anchor)
        throw new ValidationError(`${field}.forkPosition`, `its parent's lineage has no entry at position ${b.forkPosition}`);
      if ((anchor?.doc.id ?? null) !== b.forkEntryId)
        throw new ValidationError(`${field}.forkEntryId`, `is not the entry at position ${b.forkPosition} of its parent's lineage`);
      base = anchor?.head ?? GENESIS;
    } else if (b.forkPosition !== 0 || b.forkEntryId !== null) {
      throw new ValidationError(`${field}.forkPosition`, "the root branch starts at position 0");
    }
    this.#branches.set(b.id, b);
    this.#at.set(b.id, new Map());
    return base;
  }

  /** Checks a run of a branch's own entries after `head` (positions, hashes, completions); returns the new head. */
  #checkEntries(b: ExportedBranch, head: DocHead, chunk: PreparedEntry[]): DocHead {
    const at = this.#at.get(b.id)!;
    for (const e of chunk) {
      const d = e.doc;
      if (d.position !== head.position + 1)
        throw new ValidationError(`${e.field}.position`, `expected position ${head.position + 1} on branch ${b.id}`);
      const state = this.#stateOf(d.state, `${e.field}.state`);
      if (entryHash(head.hash, { ...d, content: e.content, metadata: e.metadata }, state) !== d.hash) {
        throw new IntegrityError(`entry ${d.id} of the document does not match its hash`);
      }
      const c = d.completion;
      if (
        c &&
        toolResultHash(d.hash, { entryId: d.id, status: c.status, result: e.result, error: e.error, completedAt: c.completedAt }) !== c.hash
      ) {
        throw new IntegrityError(`the completion of tool call ${d.id} of the document does not match its hash`);
      }
      head = {
        position: d.position,
        hash: d.hash,
        stateHash: state ?? head.stateHash,
        msgCount: head.msgCount + (d.kind === "message" ? 1 : 0),
      };
      e.head = head;
      at.set(d.position, e);
    }
    return head;
  }

  #checkCheckpoint(c: ExportedCheckpoint, i: number): void {
    const field = `document.checkpoints[${i}]`;
    const branch = this.#branches.get(c.branchId);
    if (!branch) throw new ValidationError(`${field}.branchId`, `branch ${c.branchId} is not among the document's branches`);
    const anchor = this.#entryAt(branch, c.position);
    if (c.position > 0 && !anchor)
      throw new ValidationError(`${field}.position`, `branch ${c.branchId} has no entry at position ${c.position}`);
    const head = anchor?.head ?? GENESIS;
    const state = this.#stateOf(c.state, `${field}.state`);
    if (head.hash !== c.headHash || state !== head.stateHash) {
      throw new IntegrityError(`checkpoint ${c.id} of the document does not match the history it points at`);
    }
    if (portableChecksum(this.checkpointBase(c, i, this.#doc.session.id, ""), state ?? EMPTY_STATE_HASH) !== c.checksum) {
      throw new IntegrityError(`checkpoint ${c.id} of the document does not match its checksum`);
    }
  }
}

/** Each branch is what it says: the root has no parent; a rollback's branch forks at its checkpoint; an edit's at none. */
export function checkBranchLinks(doc: SessionExport): void {
  const checkpoints = new Map(doc.checkpoints.map((c) => [c.id, c]));
  doc.branches.forEach((b, i) => {
    const field = `document.branches[${i}]`;
    if ((b.reason === "root") !== (b.parentId === null))
      throw new ValidationError(`${field}.reason`, 'only the root branch has no parent, and it is the only "root"');
    if ((b.continuedBy === undefined) !== (b.continuedAt === undefined))
      throw new ValidationError(`${field}.continuedBy`, "continuedBy and continuedAt come together");
    if (b.continuedFrom !== undefined && (b.continuedAt === undefined || b.continuedFrom > b.continuedAt))
      throw new ValidationError(`${field}.continuedFrom`, "comes with continuedAt, and is not after it");
    if (b.continuedBy !== undefined && (b.continuedBy === b.id || !doc.branches.some((o) => o.id === b.continuedBy)))
      throw new ValidationError(`${field}.continuedBy`, `branch ${b.continuedBy} is not another of the document's branches`);
    if ((b.reason === "rollback") !== (b.forkCheckpointId !== null)) {
      throw new ValidationError(`${field}.forkCheckpointId`, "a rollback's branch, and only it, forks at a checkpoint");
    }
    if (b.forkCheckpointId === null) return;
    const cp = checkpoints.get(b.forkCheckpointId);
    if (!cp)
      throw new ValidationError(`${field}.forkCheckpointId`, `checkpoint ${b.forkCheckpointId} is not among the document's checkpoints`);
    if (cp.branchId !== b.parentId || cp.position !== b.forkPosition) {
      throw new ValidationError(
        `${field}.forkCheckpointId`,
        `checkpoint ${cp.id} is not at the branch's fork point (its parent, position ${b.forkPosition})`,
      );
    }
  });
}

/** Ids must be unique within the document (the database would refuse them half-way otherwise). */
export function checkUniqueIds(doc: SessionExport): void {
  for (const [list, field] of [
    [doc.branches, "branches"],
    [doc.entries, "entries"],
    [doc.checkpoints, "checkpoints"],
  ] as const) {
    const seen = new Set<string>();
    list.forEach((x, i) => {
      if (seen.has(x.id)) throw new ValidationError(`document.${field}[${i}].id`, `id ${x.id} appears twice in the document`);
      seen.add(x.id);
    });
  }
}
