// The composition root: openForkpoint gives the engine (src/sessions) the store its options name (src/store/open.ts).
import type { EngineOptions } from "./sessions/core/open-options.js";
import { Forkpoint, type StoreOpener } from "./sessions/forkpoint.js";
import { openStore } from "./store/open.js";
import { storeOpenOptions, type StoreOpenOptions } from "./store/open-options.js";

/** Options of `openForkpoint`: the store's (which database) and the engine's (tools, policies, limits). */
export interface ForkpointOptions extends StoreOpenOptions, EngineOptions {}

const opener: StoreOpener = { options: storeOpenOptions, open: (o, warn) => openStore(o, warn) };

/**
 * Opens (creating if needed) a forkpoint database and applies its migrations.
 * @example const fp = openForkpoint({ path: "./forkpoint.db", tools: [writeFile] });
 */
export function openForkpoint(options: ForkpointOptions = {}): Forkpoint {
  return new Forkpoint(options, opener);
}
