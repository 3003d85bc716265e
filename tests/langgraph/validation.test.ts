// LangGraph's own conformance suite for checkpointers (@langchain/langgraph-checkpoint-validation), run against
// ForkpointSaver on a real database file: put, putWrites, getTuple, list and deleteThread, in both namespaces.
import * as vitest from "vitest";
import { type Forkpoint } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

// The suite calls describe/it/expect as globals (it is written for Jest and Vitest alike).
Object.assign(globalThis, {
  describe: vitest.describe,
  it: vitest.it,
  test: vitest.test,
  expect: vitest.expect,
  beforeAll: vitest.beforeAll,
  afterAll: vitest.afterAll,
  beforeEach: vitest.beforeEach,
  afterEach: vitest.afterEach,
});
const { validate, deltaChannelHistoryTests } = await import("@langchain/langgraph-checkpoint-validation");

const open = new Map<ForkpointSaver, { fp: Forkpoint; dir: string }>();

const initializer = {
  checkpointerName: "forkpoint",
  // Each checkpointer gets its own database file, so no test sees another's threads.
  createCheckpointer(): ForkpointSaver {
    const dir = makeTempDir();
    const fp = openForkpoint({ path: `${dir}/forkpoint.db` });
    const saver = new ForkpointSaver(fp);
    open.set(saver, { fp, dir });
    return saver;
  },
  async destroyCheckpointer(saver: ForkpointSaver): Promise<void> {
    const entry = open.get(saver)!;
    open.delete(saver);
    await entry.fp.close();
    removeDir(entry.dir);
  },
};

validate(initializer);
deltaChannelHistoryTests(initializer);
