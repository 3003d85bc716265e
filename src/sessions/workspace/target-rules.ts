// Which files a restore leaves alone: those its target's own ignore rules ignore (build output that a rewind past the
// .gitignore line naming it made visible, a file captured before that line named it), which its target never captured.
import type { Step, Tx, WorkspaceRow } from "../../store/port/index.js";
import { contentOf } from "./file-id.js";
import { type FileChange } from "./trees.js";
import { readBlobs, type PackCache } from "./packs.js";
import { makeRules, type Rules } from "./rules.js";
import { ignoreFactory } from "./state.js";
import { ignoreFileText } from "./ignore-file.js";

const isGitignore = (path: string) => path === ".gitignore" || path.endsWith("/.gitignore");

/** Whether `rules` leave `path` (a file) out, its folders asked first, as a walk asks. */
export function ignoredFile(rules: Rules, path: string): boolean {
  const parts = path.split("/");
  for (let i = 1; i < parts.length; i++) if (rules.ignored(parts.slice(0, i).join("/"), true)) return true;
  return rules.ignored(path, false);
}

/**
 * Of `added` (files on disk that forkpoint had not seen: new since, or ignored until a restore rewrote a .gitignore;
 * and files the target has none of), those the directory's rules ignore once `changes` (from what forkpoint last saw
 * to the target) are applied: the target's .gitignore files where the restore writes or deletes them, the ones on disk
 * elsewhere. They are no drift for the restore, which leaves them as they are (it neither saves nor deletes a file its
 * target ignores: the target never captured it). Empty when the restore changes no .gitignore file: the rules stay
 * those the files were just read under.
 */
export function* ignoredByTarget(
  tx: Tx,
  ws: WorkspaceRow,
  changes: readonly FileChange[],
  added: readonly string[],
  packs: PackCache,
): Step<Set<string>> {
  const rewritten = changes.filter((c) => isGitignore(c.path));
  if (!ws.gitignore || added.length === 0 || rewritten.length === 0) return new Set();
  const blobs = yield* readBlobs(
    tx,
    rewritten.flatMap((c) => (c.to === null ? [] : [contentOf(c.to)])),
    packs,
  );
  const texts = new Map(rewritten.map((c) => [c.path, c.to === null ? null : blobs.get(contentOf(c.to))!.toString("utf8")]));
  const readText = (full: string): string | null => {
    const rel = full.slice(ws.dir.length + 1);
    return texts.has(rel) ? texts.get(rel)! : ignoreFileText(full);
  };
  const rules = makeRules(ws.dir, JSON.parse(ws.exclude) as string[], true, ignoreFactory, readText);
  return new Set(added.filter((path) => ignoredFile(rules, path)));
}
