// switch_branch to the current branch before any checkpoint: nothing to do, so no error (review of the "both" moves).
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { removeDir } from "../helpers.js";
import { connect, mcpRoot, ok, write, type Connected } from "./fixture.js";

let root: string;
let ws: string;
let db: string;
let server: Connected | undefined;

beforeEach(() => {
  ({ root, ws, db } = mcpRoot("forkpoint-mcp-switch-current-"));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

it("switch_branch to the current branch before any checkpoint changes nothing", async () => {
  write(ws, "a.txt", "a");
  server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "me"]);
  const { currentBranchId } = await ok<{ currentBranchId: string }>(server.client, "branches");
  const moved = await ok(server.client, "switch_branch", { branch: currentBranchId });
  expect(moved.branch.id).toBe(currentBranchId);
  expect(fs.readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("a");
});
