// The built page for the browser tests: dist/web, rebuilt with Vite when missing or older than a file of ui/ (as
// `forkpoint ui` does from a clone).
import { fileURLToPath } from "node:url";
import { buildPage, pageFolders, pageIsCurrent } from "../../src/cli/ui-page.js";

export const repo = fileURLToPath(new URL("../..", import.meta.url));

/** Builds the page unless dist/web/index.html is newer than every source file of ui/. */
export async function ensurePageBuilt(): Promise<void> {
  const { out, source } = pageFolders(repo);
  if (!pageIsCurrent(out, source)) await buildPage(out, source);
}
