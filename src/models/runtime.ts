// The Node.js versions forkpoint runs on, checked before anything native loads (better-sqlite3 13 crashes on Node 20).
import { ForkpointError } from "./errors.js";

/** The oldest Node.js major line forkpoint supports (package.json's `engines.node`). */
export const MIN_NODE_MAJOR = 22;

/** Throws `ForkpointError` `UNSUPPORTED_RUNTIME` naming the Node.js version needed, on an older Node. */
export function requireSupportedNode(version: string = process.versions.node): void {
  const major = Number(version.split(".")[0]);
  if (Number.isInteger(major) && major >= MIN_NODE_MAJOR) return;
  throw new ForkpointError(
    "UNSUPPORTED_RUNTIME",
    `forkpoint needs Node.js ${MIN_NODE_MAJOR} or later; this is Node.js ${version}. Install Node.js ${MIN_NODE_MAJOR} or later.`,
  );
}
