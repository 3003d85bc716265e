// From the MCP review: a captured file or folder replaced by a symbolic link (`rm a.txt && ln -s elsewhere a.txt`).
// plan_rollback must say what rollback will do: rollback refuses (WORKSPACE_DRIFT), so the plan's refusal names it and
// its lists are not empty; and a forced rollback refused for the link does not tell the agent to force again.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir } from "../helpers.js";
import { call, connect, lineOf, ok, refused, write, type Connected, mcpRoot } from "./fixture.js";

let root: string;
let ws: string;
let outside: string;
let db: string;
let server: Connected | undefined;

beforeEach(() => {
  ({ root, ws, outside, db } = mcpRoot("forkpoint-mcp-review-link-"));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

describe("a captured path replaced by a symbolic link", () => {
  it.each([
    ["a file", "a.txt", () => (fs.rmSync(path.join(ws, "a.txt")), fs.symlinkSync(path.join(outside, "t.txt"), path.join(ws, "a.txt")))],
    [
      "a folder",
      "src/x.ts",
      () => (
        fs.renameSync(path.join(ws, "src"), path.join(outside, "src")),
        fs.symlinkSync(path.join(outside, "src"), path.join(ws, "src"))
      ),
    ],
  ])("%s: plan_rollback says what rollback does", async (_what, changed, replace) => {
    write(ws, "a.txt", "a\n");
    write(ws, "src/x.ts", "x\n");
    fs.writeFileSync(path.join(outside, "t.txt"), "outside\n");
    server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"]);
    const { client } = server;
    await ok(client, "checkpoint", { name: "one" });
    replace();

    const text = await refused(client, "rollback", { checkpoint: "one" });
    expect(text).toMatch(/^WORKSPACE_DRIFT: /);
    expect(text).not.toMatch(/again with force: true/);
    const plan = await ok(client, "plan_rollback", { checkpoint: "one" });
    expect(plan.refusal).toBe("WORKSPACE_DRIFT");
    expect(plan.uncheckpointed).toContain(changed);
    // Its line says forcing does not get past the link.
    const planLine = lineOf(await call(client, "plan_rollback", { checkpoint: "one" }));
    expect(planLine).toMatch(/even with force: true.*symbolic link/);

    // Forced, it is still refused (a link is in the way): the line must not send the agent round to force again.
    const forced = await refused(client, "rollback", { checkpoint: "one", force: true });
    expect(forced).toMatch(/^WORKSPACE_DRIFT: .*symbolic link/);
    expect(forced).not.toMatch(/again with force: true/);
    expect(fs.readFileSync(path.join(outside, "t.txt"), "utf8")).toBe("outside\n");
  });
});
