// From the MCP review: `--session` naming a session an application already attached a workspace to. Attaching it again
// takes the files as they are for saved: an unsaved edit stops being drift, and the next rollback overwrites it with
// nothing kept. Such a session is taken as it is (its directory, its list), or refused when it is another directory's.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { removeDir } from "../helpers.js";
import { childEnv, connect, mcpArgs, mcpRoot, ok, refused, write, type Connected } from "./fixture.js";

let root: string;
let ws: string;
let outside: string;
let db: string;
let server: Connected | undefined;

beforeEach(() => {
  ({ root, ws, outside, db } = mcpRoot("forkpoint-mcp-review-named-"));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

/** An application's session with `dir` attached, a checkpoint of it, then an edit it has not checkpointed. */
async function appSession(dir: string, exclude: string[]): Promise<{ id: string; cp: string }> {
  write(dir, "app.txt", "v1\n");
  const fp = openForkpoint({ path: db });
  try {
    const s = await fp.createSession({ userId: "alice" });
    await s.attachWorkspace(dir, { exclude });
    const cp = await s.checkpoint({ name: "app" });
    write(dir, "app.txt", "v2, not checkpointed\n");
    return { id: s.id, cp: cp.id };
  } finally {
    await fp.close();
  }
}

describe("--session naming a session an application attached a workspace to", () => {
  it.each([[[".git"]], [[]]])("of this directory (exclude %j): its edits stay drift, never overwritten", async (exclude) => {
    const app = await appSession(ws, exclude);
    server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice", "--session", app.id]);
    expect(await refused(server.client, "rollback", { checkpoint: "app" })).toMatch(/^WORKSPACE_DRIFT: .*app\.txt/);
    expect(fs.readFileSync(path.join(ws, "app.txt"), "utf8")).toBe("v2, not checkpointed\n");
    // Forced, the edit is saved first.
    const forced = await ok(server.client, "rollback", { checkpoint: "app", force: true });
    expect(forced.savedDrift.files).toEqual(["app.txt"]);
    await ok(server.client, "undo");
    expect(fs.readFileSync(path.join(ws, "app.txt"), "utf8")).toBe("v2, not checkpointed\n");
  });

  it("of another directory: refused, and the application's workspace stays as it was", async () => {
    const app = await appSession(outside, [".git"]);
    const run = spawnSync(process.execPath, mcpArgs(["--workspace", ws, "--db", db, "--user", "alice", "--session", app.id]), {
      encoding: "utf8",
      env: childEnv(),
      input: "",
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(outside);
    const fp = openForkpoint({ path: db });
    try {
      const s = await fp.getSession(app.id, { userId: "alice" });
      expect(await s.diffFiles(app.cp, "disk", { patch: false })).toMatchObject({ modified: ["app.txt"] });
    } finally {
      await fp.close();
    }
  });
});
