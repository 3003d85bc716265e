// Each message's `< 2/3 >` picker from the history's entries, by the id `loadChat` gives the message.

/** What the picker reads of a history entry read `withVersions` (forkpoint's `VersionedMessage`). */
interface Entry<V extends { count: number }> {
  id: string;
  clientId: string | null;
  versions: V;
}

/**
 * The versions of each message by its UIMessage id (the id the client gave it, stored as `clientId`, else forkpoint's).
 * A message stored in several entries (an answer continued after a client-side tool or an approval, or saved after
 * each step) takes those of its first entry that has other versions: an edit of such an answer, or another tab's
 * answer to its approval, forks before a later form, so its first entry may have none.
 */
export function versionsByMessage<V extends { count: number }>(history: readonly Entry<V>[]): Record<string, V> {
  const versions: Record<string, V> = {};
  for (const m of history) {
    const id = m.clientId ?? m.id;
    if (versions[id] === undefined || (versions[id].count === 1 && m.versions.count > 1)) versions[id] = m.versions;
  }
  return versions;
}
