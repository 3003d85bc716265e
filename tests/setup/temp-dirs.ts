// Setup file of every project: the temp directories a test made through the fixtures are removed when it ends.
import { afterAll, afterEach, beforeEach } from "vitest";
import { enterTest, removeTempDirs } from "../fixtures/temp-dirs.js";

// Registered before the other setup files' and the suites' hooks, so these run first before a test and last after it
// (vitest runs after-hooks in reverse), once the test's databases are closed.
beforeEach(() => enterTest());
afterEach(() => removeTempDirs("test"));
afterAll(() => removeTempDirs("file"));
