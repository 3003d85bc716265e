// The composition root: openForkpoint gives the engine (src/sessions) the store its options name (src/store/open.ts).
import { Forkpoint } from "./sessions/forkpoint.js";
import type { ForkpointOptions } from "./sessions/core/open-options.js";
import { openStore } from "./store/open.js";

/**
 * Opens (creating if needed) a forkpoint database and applies its migrations.
 * @example const fp = openForkpoint({ path: "./forkpoint.db", tools: [writeFile] });
 */
export function openForkpoint(options: ForkpointOptions = {}): Forkpoint {
  return new Forkpoint(options, openStore);
}
