// The Node.js versions forkpoint runs on, checked before anything native loads (better-sqlite3 13 crashes on Node 20).
import { ForkpointError } from "./errors.js";

/** The oldest Node.js forkpoint supports (package.json's `engines.node`): 22.12, where `require(esm)` is unflagged. */
export const MIN_NODE = { major: 22, minor: 12 } as const;

/** Throws `ForkpointError` `UNSUPPORTED_RUNTIME` naming the Node.js version needed, on an older Node. */
export function requireSupportedNode(version: string = process.versions.node): void {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  if (major > MIN_NODE.major || (major === MIN_NODE.major && minor >= MIN_NODE.minor)) return;
  throw new ForkpointError(
    "UNSUPPORTED_RUNTIME",
    `forkpoint needs Node.js ${MIN_NODE.major}.${MIN_NODE.minor} or later; this is Node.js ${version}. Install Node.js 22 or later (22.12+).`,
  );
}
