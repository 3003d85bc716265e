// The built page (Vite's output): where it is, and serving its files by name with their content types.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
};

/**
 * The folder holding the built page: dist/web of the package. From the compiled server (dist/ui/) it is ../web; from
 * the source (src/ui/, run by tsx in a clone) it is ../../dist/web, where `npm run build` writes it.
 */
export function defaultAssetsDir(): string {
  const candidates = ["../web", "../../dist/web"].map((p) => fileURLToPath(new URL(p, import.meta.url)));
  return candidates.find((dir) => existsSync(join(dir, "index.html"))) ?? candidates[candidates.length - 1]!;
}

/** A file of the page by its URL path, or null when there is none (or the path tries to leave the folder). */
export async function readAsset(dir: string, urlPath: string): Promise<{ body: Buffer; type: string } | null> {
  const relative = urlPath === "/" ? "index.html" : decodeURIComponent(urlPath).replace(/^\/+/, "");
  const file = normalize(join(dir, relative));
  if (!file.startsWith(normalize(dir) + sep)) return null;
  try {
    return { body: await readFile(file), type: TYPES[extname(file)] ?? "application/octet-stream" };
  } catch {
    return null;
  }
}
