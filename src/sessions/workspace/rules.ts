// Which paths of a workspace are captured: not those its `exclude` patterns name; with `gitignore` (the default for
// workspaces attached now), neither those its own .gitignore files ignore (nested, with negations, as git reads them)
// nor a `.git` directory or file (a worktree's or a submodule's pointer to its repository), at any depth.
// Whatever the rules, the files a restore stages beside their destinations, or links aside while it replaces them
// (`<name>.forkpoint-<pid>.tmp` and `.old`, staged.ts), are never captured: they are forkpoint's own, and a checkpoint
// taken (by another process) while a restore runs would take them for the user's.
// `makeRules` uses nothing from outside its own body: the watcher's worker thread runs it from its source text.

/** Whether a path is left out. `rel` is relative to the workspace, "/"-separated; its parent directories were checked. */
export interface Rules {
  ignored(rel: string, isDir: boolean): boolean;
}

/** `ignore`'s options, as far as the rules set them. */
interface MatcherOptions {
  ignorecase: boolean;
}

/** An `ignore` instance, as far as the rules use one. */
interface Matcher {
  add(patterns: string | readonly string[]): Matcher;
  test(path: string): { ignored: boolean; unignored: boolean };
}

/**
 * The rules of the workspace at `root`. `.gitignore` files are read once each, when a path under their directory is
 * first asked about: a change to one is a change of the rules (callers start over with new rules).
 */
export function makeRules(
  root: string,
  exclude: readonly string[],
  gitignore: boolean,
  ignoreFactory: (options: MatcherOptions) => Matcher,
  readText: (path: string) => string | null,
): Rules {
  // As git matches on the platform's usual file system (core.ignorecase): by case on Linux, where `Build/` and `build/`
  // are two folders and `build/` in a .gitignore leaves `Build/` in; regardless of case on macOS and Windows.
  const options = { ignorecase: process.platform === "darwin" || process.platform === "win32" };
  const excluded = ignoreFactory(options).add([...exclude]);
  /** Each directory's .gitignore matcher (null: it has none), by the directory's relative path ("" for the root). */
  const scopes = new Map<string, Matcher | null>();
  const scope = (dir: string): Matcher | null => {
    let m = scopes.get(dir);
    if (m === undefined) {
      const text = readText(dir === "" ? `${root}/.gitignore` : `${root}/${dir}/.gitignore`);
      m = text === null ? null : ignoreFactory(options).add(text);
      scopes.set(dir, m);
    }
    return m;
  };
  // The names staged.ts gives: `<name>.forkpoint-<pid>.tmp` (or .old), `.forkpoint-<pid>-<16 hex>.tmp` for long names.
  const staged = /\.forkpoint-\d+(?:-[0-9a-f]{16})?\.(?:tmp|old)$/;
  return {
    ignored(rel: string, isDir: boolean): boolean {
      if (!isDir && staged.test(rel)) return true;
      const asked = isDir ? `${rel}/` : rel;
      if (excluded.test(asked).ignored) return true;
      // Without `gitignore` (workspaces attached before it existed, or turned off), files are read as they were then.
      if (!gitignore) return false;
      if (rel.slice(rel.lastIndexOf("/") + 1) === ".git") return true;
      // The deepest .gitignore with an opinion decides (in one file, its last matching pattern, as `ignore` tests it).
      let at = rel.lastIndexOf("/");
      for (;;) {
        const dir = at < 0 ? "" : rel.slice(0, at);
        const m = scope(dir);
        if (m) {
          const r = m.test(at < 0 ? asked : asked.slice(at + 1));
          if (r.ignored) return true;
          if (r.unignored) return false;
        }
        if (at < 0) return false;
        at = dir.lastIndexOf("/");
      }
    },
  };
}
