// The web view's page where `forkpoint ui` finds it: shipped built in a package, built on the fly in a clone.
import { existsSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CliError } from "./cli.js";

/** The newest modification time of the files under `dir`. */
function newest(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((t, d) => {
    const path = join(dir, d.name);
    return Math.max(t, d.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }, 0);
}

/** Where the page is built and from what: the package's dist/web, and the clone's ui/ (absent from a package). */
export function pageFolders(root = fileURLToPath(new URL("../../", import.meta.url))): { out: string; source: string } {
  return { out: join(root, "dist", "web"), source: join(root, "ui") };
}

/** True when `out` holds a page at least as new as every file of `source`. */
export function pageIsCurrent(out: string, source: string): boolean {
  const index = join(out, "index.html");
  return existsSync(index) && (!existsSync(source) || statSync(index).mtimeMs >= newest(source));
}

/**
 * Builds the page from `source` into `out` with Vite (a devDependency: present in a clone after `npm ci`), into a
 * folder of its own first, so that a server reading `out` meanwhile, or a second build, never sees half a page.
 */
export async function buildPage(out: string, source: string): Promise<void> {
  let vite: typeof import("vite");
  try {
    vite = await import("vite");
  } catch (cause) {
    throw new CliError(`the web view's page is not built and Vite is not installed: run npm ci, then npm run build:ui`, {
      cause,
      code: "UI_NOT_BUILT",
    });
  }
  const staging = `${out}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  // React's production build, whatever NODE_ENV this process runs under (a test runner's "test" would give the
  // development one, whose effects run twice under StrictMode).
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = "production";
  try {
    await vite.build({ configFile: join(source, "vite.config.ts"), build: { outDir: staging, emptyOutDir: true }, logLevel: "error" });
    rmSync(out, { recursive: true, force: true });
    renameSync(staging, out);
  } catch (error) {
    // Another build finished first: its page is as good as this one.
    if (!pageIsCurrent(out, source)) throw error;
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * The folder of the page to serve. A package ships it built (dist/web beside the compiled server). Run from a clone's
 * source, it is built into dist/web when missing or older than ui/ (after `npm ci` alone, or a pull), saying so on
 * `log`: one build of a few seconds, and no second copy of the page kept in git to drift from its source.
 */
export async function pageFolder(log: (line: string) => void): Promise<string> {
  // Compiled, this file is dist/cli/ui-page.js and the page dist/web.
  const shipped = fileURLToPath(new URL("../web", import.meta.url));
  if (!import.meta.url.endsWith(".ts")) return shipped;
  const { out, source } = pageFolders();
  if (!pageIsCurrent(out, source)) {
    log(`forkpoint ui: building the page (ui/ into dist/web), once after an install or a change of ui/…`);
    await buildPage(out, source);
  }
  return out;
}
