// The store port's contract, written once and run once per driver (LangGraph's `specTest(initializer)`): a third
// store passes it with one file, `storeSpec("name", open)`. It calls the port directly, never the public API.
import { afterAll, beforeAll, describe } from "vitest";
import type { Store } from "../../../src/store/port/index.js";
import { callsSpec, movesSpec, moveStackSpec } from "./moves.js";
import { checkpointsSpec } from "./checkpoints.js";
import { entriesSpec } from "./entries.js";
import { langgraphSpec } from "./langgraph.js";
import { requestsSpec } from "./requests.js";
import { sessionsSpec } from "./sessions.js";
import { unitsSpec } from "./units.js";
import { workspacesSpec } from "./workspaces.js";

/** Opens an empty, migrated store of the driver under test; each call a new one (its own file or database). */
export type OpenStore = () => Promise<Store>;

/** Runs the spec on stores `open` makes; with `skip`, reports it skipped (the driver's server is not there). */
export function storeSpec(name: string, open: OpenStore, options: { skip?: boolean } = {}): void {
  describe.skipIf(options.skip ?? false)(`store spec: ${name}`, () => {
    let store: Store | undefined;
    const get = () => store!;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store?.close();
    });
    describe("units of work", () => unitsSpec(get, open));
    describe("sessions", () => sessionsSpec(get));
    describe("entries", () => entriesSpec(get));
    describe("checkpoints", () => checkpointsSpec(get));
    describe("calls", () => callsSpec(get));
    describe("moves", () => movesSpec(get));
    describe("move stack", () => moveStackSpec(get));
    describe("requests", () => requestsSpec(get));
    describe("workspaces", () => workspacesSpec(get));
    describe("langgraph", () => langgraphSpec(get));
  });
}
