// A file as a snapshot holds it: its content's hash and whether it is executable (the one mode bit kept, as git keeps
// only that one). In memory a file's id is its hash, followed by "+x" when executable, so that comparing ids compares
// both: a change of mode alone is a change. A stored tree row is `[name, hash]`, or `[name, hash, "x"]` for an
// executable file: its second element stays the content's hash, which prune (and an older forkpoint) take it for.

const EXEC = "+x";

/** The id of a file of content `hash`, executable or not. */
export const fileIdOf = (hash: string, executable: boolean): string => (executable ? hash + EXEC : hash);

/** The content hash of a file id. */
export const contentOf = (id: string): string => (id.endsWith(EXEC) ? id.slice(0, -EXEC.length) : id);

/** Whether a file id is an executable file's. */
export const isExecutable = (id: string): boolean => id.endsWith(EXEC);

/** Whether a file of this st_mode counts as executable: its owner may execute it (git's test). */
export const executableMode = (mode: number): boolean => (mode & 0o100) !== 0;

/** The mode a file of this id is written with (before the umask), as git checks files out. */
export const modeOf = (id: string): number => (isExecutable(id) ? 0o777 : 0o666);

/**
 * The mode a file of this id is given in place of a file of mode `current`: that file's permission bits (a 0600 secret
 * stays 0600: a snapshot keeps only the executable bit, so the rest is the file's own), executable where it may be read
 * when the id is an executable file's, executable by no one when not.
 */
export const keptModeOf = (id: string, current: number): number => {
  const bits = current & 0o777;
  return isExecutable(id) ? bits | ((bits & 0o444) >> 2) | 0o100 : bits & ~0o111;
};

/** The mode a unified diff names for a file of this id. */
export const gitMode = (id: string): string => (isExecutable(id) ? "100755" : "100644");

const byName = (a: readonly unknown[], b: readonly unknown[]) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : 0);

/** A tree's body from its entries (a file's name → its id, a subdirectory's "name/" → its tree hash), by name. */
export function treeBodyOf(entries: Iterable<readonly [string, string]>): string {
  const rows: (readonly [string, string] | [string, string, "x"])[] = [];
  for (const [name, value] of entries)
    rows.push(name.endsWith("/") || !isExecutable(value) ? [name, value] : [name, contentOf(value), "x"]);
  return JSON.stringify(rows.sort(byName));
}

/** A tree's entries from its stored rows (see `treeBodyOf`). */
export function entriesOfRows(rows: readonly (readonly unknown[])[]): Map<string, string> {
  const entries = new Map<string, string>();
  for (const r of rows) entries.set(r[0] as string, r[2] === "x" ? (r[1] as string) + EXEC : (r[1] as string));
  return entries;
}
