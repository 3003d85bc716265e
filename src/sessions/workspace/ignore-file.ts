// A .gitignore file's text as git reads it in a work tree: a symbolic link named .gitignore is not followed (git
// 2.32 on refuses to), so a link to a file elsewhere neither hides files nor shows them.
import { lstatSync, readFileSync } from "node:fs";

/** The text of the .gitignore file at `path`, or null when there is none, it is no regular file, or is unreadable. */
export function ignoreFileText(path: string): string | null {
  try {
    // lstat first: asked of every directory, a missing file costs no exception. A directory that is a file now (a
    // call or a hand made it one) has none: ENOTDIR, caught.
    if (!lstatSync(path, { throwIfNoEntry: false })?.isFile()) return null;
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}
