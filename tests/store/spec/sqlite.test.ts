// The store spec on SQLite: each store a new file in a temporary directory.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";
import { SqliteStore } from "../../../src/store/sqlite/store.js";
import { storeSpec } from "./store-spec.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "forkpoint-spec-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let n = 0;

storeSpec(
  "sqlite",
  async () => new SqliteStore({ path: path.join(dir, `${n++}.db`), durability: "normal", busyTimeoutMs: 5000, readonly: false }),
);
