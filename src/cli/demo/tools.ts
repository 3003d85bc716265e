// The demo's tool, as a module `--tools` can load: write_file writes a file, and its undo puts back what was there.
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { defineTool } from "../../index.js";

/** Writes `text` to the absolute `path`; the recorded result keeps what the file held before, for the undo. */
export const writeFile = defineTool({
  name: "write_file",
  description: "write a text file",
  run: async ({ path, text }: { path: string; text: string }) => {
    const previous = existsSync(path) ? readFileSync(path, "utf8") : null;
    writeFileSync(path, text);
    return { path, previous };
  },
  undo: async ({ result }: { args: unknown; result: { path: string; previous: string | null } }) => {
    if (result.previous === null) rmSync(result.path, { force: true });
    else writeFileSync(result.path, result.previous);
  },
});

export default [writeFile];
