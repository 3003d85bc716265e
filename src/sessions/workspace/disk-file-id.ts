// The file id (content hash and executable bit, see file-id.ts) of what a workspace path holds on disk now, read whole.
import { createHash } from "node:crypto";
import { lstatSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { executableMode, fileIdOf } from "./file-id.js";
import { codeOf } from "./walk.js";

/** The file id of what `path` (relative to `dir`) holds (null: no file; undefined: something else, a folder or a link, or unreadable). */
export function diskFileId(dir: string, path: string): string | null | undefined {
  const full = join(dir, ...path.split("/"));
  try {
    const st = lstatSync(full);
    if (!st.isFile()) return undefined;
    return fileIdOf(createHash("sha256").update(readFileSync(full)).digest("hex"), executableMode(st.mode));
  } catch (error) {
    return codeOf(error) === "ENOENT" || codeOf(error) === "ENOTDIR" ? null : undefined;
  }
}
