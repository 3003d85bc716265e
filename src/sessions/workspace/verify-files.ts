// Checking the files a checkpoint captured (for verify): every tree and every content against their hashes, each once.
import type { Step, Tx } from "../../store/port/index.js";
import { contentOf } from "./file-id.js";
import { TreeReader } from "./trees.js";
import { readBlobs } from "./packs.js";

/** Memo of `verify`: problems found per tree (relative paths under it) and per content, by hash. */
export interface FilesSeen {
  trees: Map<string, string[] | null>;
  contents: Map<string, boolean>;
}

/**
 * Problems with the files a checkpoint captured (for `verify`): every tree and every content against their hashes.
 * With `seen`, what an earlier checkpoint's check found is not checked again (snapshots share most of their trees).
 */
export function* checkpointFilesProblems(tx: Tx, checkpointId: string, seen?: FilesSeen): Step<string[]> {
  const files = yield* tx.checkpointManifest(checkpointId);
  if (!files) return [];
  const memo = seen ?? { trees: new Map(), contents: new Map() };
  const reader = new TreeReader(true);
  let root: string;
  try {
    root = yield* reader.rootOf(tx, files.manifestId);
  } catch {
    return ["its file manifest is missing or does not match its hash"];
  }
  const problems = yield* treeProblems(tx, reader, root, memo);
  if (problems === null) return ["its file manifest is missing or does not match its hash"];
  return problems.map((path) => `its file ${path} is missing or does not match its hash`);
}

/** The files under tree `hash` whose content is missing or damaged (null: a tree is). */
function* treeProblems(tx: Tx, reader: TreeReader, hash: string, memo: FilesSeen): Step<string[] | null> {
  const known = memo.trees.get(hash);
  if (known !== undefined) return known;
  let entries;
  try {
    yield* reader.load(tx, [hash]);
    entries = reader.entries(hash);
  } catch {
    memo.trees.set(hash, null);
    return null;
  }
  const out: string[] = [];
  const files: [string, string][] = [];
  for (const [key, h] of entries) {
    if (key.endsWith("/")) {
      const below = yield* treeProblems(tx, reader, h, memo);
      if (below === null) {
        memo.trees.set(hash, null);
        return null;
      }
      out.push(...below.map((p) => `${key}${p}`));
    } else files.push([key, contentOf(h)]);
  }
  const unchecked = [...new Set(files.map(([, h]) => h).filter((h) => !memo.contents.has(h)))];
  for (let i = 0; i < unchecked.length; i += 256) {
    const chunk = unchecked.slice(i, i + 256);
    try {
      yield* readBlobs(tx, chunk);
      for (const h of chunk) memo.contents.set(h, true);
    } catch {
      for (const h of chunk) {
        try {
          yield* readBlobs(tx, [h]);
          memo.contents.set(h, true);
        } catch {
          memo.contents.set(h, false);
        }
      }
    }
  }
  for (const [name, h] of files) if (!memo.contents.get(h)) out.push(name);
  const sorted = out.sort();
  memo.trees.set(hash, sorted);
  return sorted;
}
