// Where a LangGraph checkpoint's channel values are stored, as `getDeltaChannelHistory` and `prune` both weigh it.
// A channel has a value at a checkpoint when the saver stored one for its version there: the messages channel as the
// session's messages (mirrored), any channel as a blob of that version. A DeltaChannel (LangGraph names them in the
// checkpoint's metadata, `counters_since_delta_snapshot`) with a version and no stored value is between snapshots:
// LangGraph rebuilds it from the pending writes of the checkpoint's ancestors. (Other channels may have a version and no
// value too: an input or branch channel once consumed is empty, and nothing rebuilds it.)
import { isDeltaSnapshot, type Checkpoint, type CheckpointMetadata } from "@langchain/langgraph-checkpoint";
import type { LgCheckpointRow } from "../store/port/index.js";
import { versionKey, type SaverParts } from "./saver-parts.js";
import type { Synthesized } from "./thread-head.js";

/** A stored checkpoint's channel versions (as the saver keys them: their JSON), format version and DeltaChannels. */
export interface RowVersions {
  versions: Map<string, string>;
  format: number;
  /** The DeltaChannels LangGraph counts updates of since their last snapshot at this checkpoint. */
  deltaChannels: Set<string>;
}

/** The channel versions of a stored checkpoint, read from its serialized skeleton and metadata. */
export async function rowVersions(parts: SaverParts, row: LgCheckpointRow): Promise<RowVersions> {
  const skeleton = (await parts.serde.loadsTyped(row.type, row.checkpoint)) as Partial<Checkpoint>;
  const metadata = (await parts.serde.loadsTyped(row.metadataType, row.metadata)) as CheckpointMetadata | null;
  const counters = (metadata as Record<string, unknown> | null)?.counters_since_delta_snapshot;
  const versions = new Map(Object.entries(skeleton.channel_versions ?? {}).map(([c, v]) => [c, versionKey(v)]));
  return {
    versions,
    format: typeof skeleton.v === "number" ? skeleton.v : 4,
    deltaChannels: new Set(counters !== null && typeof counters === "object" ? Object.keys(counters) : []),
  };
}

/** Whether the messages channel of a stored checkpoint is the session's messages at it. */
export function mirroredAt(parts: SaverParts, row: LgCheckpointRow, versions: RowVersions): boolean {
  return row.messagesVersion !== null && versions.versions.get(parts.messages) === row.messagesVersion;
}

/**
 * Whether LangGraph keeps the messages channel of a base checkpoint outside the session: a DeltaChannel (as
 * `MessagesDeltaValue` is), whose value there is no list at all, or a `DeltaSnapshot`. A checkpoint synthesized on that
 * base then keeps the base's channel as it is (its deltas, or its snapshot), never the session's messages (which do not
 * hold that conversation). `value` is the base's stored value of the channel (absent: none stored).
 */
export function deltaMessagesAt(
  base: LgCheckpointRow,
  hasVersion: boolean,
  value: { stored: false } | { stored: true; value: unknown },
): boolean {
  return base.messagesVersion === null && hasVersion && (!value.stored || isDeltaSnapshot(value.value));
}

/**
 * What a checkpoint is, for weighing its channel values: a stored one (its row and versions), or one synthesized on a
 * base (the base's values, with the session's messages unless the base keeps them as deltas: `deltaMessagesAt`).
 */
export type ValuesNode =
  | { kind: "stored"; id: string; row: LgCheckpointRow; versions: RowVersions }
  | { kind: "synthesized"; id: string; synth: Synthesized; base?: { row: LgCheckpointRow; versions: RowVersions } };

/** The checkpoint the walk to a node's ancestors goes on from (a synthesized one holds its base's values: its base's parent). */
export function parentOf(node: ValuesNode): string | null {
  return node.kind === "stored" ? node.row.parentCheckpointId : (node.base?.row.parentCheckpointId ?? null);
}

/**
 * The DeltaChannels a node has a version of but no stored value for (`hasBlob`: whether a blob of that channel and
 * version is stored): what LangGraph rebuilds from its ancestors' writes. Decided without reading a value: a stored
 * messages channel of a base is a value either way (the session's messages or the base's own), and without one the
 * session's messages stand in only for a channel the base does not keep as deltas.
 */
export function openChannels(parts: SaverParts, node: ValuesNode, hasBlob: (channel: string, version: string) => boolean): string[] {
  const open: string[] = [];
  const at = node.kind === "stored" ? { row: node.row, versions: node.versions } : node.base;
  if (!at) return open;
  for (const channel of at.versions.deltaChannels) {
    const version = at.versions.versions.get(channel);
    if (version === undefined || hasBlob(channel, version)) continue;
    if (channel === parts.messages) {
      if (mirroredAt(parts, at.row, at.versions)) continue;
      // Synthesized: without messages the channel is absent (nothing to rebuild); else the session's messages stand
      // in, unless the base keeps them as deltas.
      if (node.kind === "synthesized" && (node.synth.messagesVersion === undefined || !deltaMessagesAt(at.row, true, { stored: false })))
        continue;
    }
    open.push(channel);
  }
  return open;
}
