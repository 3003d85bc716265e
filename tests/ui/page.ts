// The built page for the browser test: dist/web is rebuilt with Vite when missing or older than a file of ui/.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const repo = fileURLToPath(new URL("../..", import.meta.url));

function newest(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((t, d) => {
    const path = join(dir, d.name);
    return Math.max(t, d.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }, 0);
}

/** Builds the page unless dist/web/index.html is newer than every source file of ui/. */
export async function ensurePageBuilt(): Promise<void> {
  const index = join(repo, "dist", "web", "index.html");
  if (existsSync(index) && statSync(index).mtimeMs > newest(join(repo, "ui"))) return;
  const { build } = await import("vite");
  await build({ configFile: join(repo, "ui", "vite.config.ts"), logLevel: "error" });
}
