// From the MCP review: plan_rollback must say what rollback will do. Three ways a rollback is refused even with
// force: true were planned as fine (refusal null, "would write back ..."): a folder holding ignored files where the
// checkpoint has a file, a file grown past the size limit, a file ignored now whose content the checkpoint does not
// have. And a new file the checkpoint's .gitignore ignores is no drift for it: the plan does not refuse for it either.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir } from "../helpers.js";
import { call, connect, lineOf, ok, refused, write, type Connected, mcpRoot } from "./fixture.js";

let root: string;
let ws: string;
let db: string;
let server: Connected | undefined;

beforeEach(() => {
  ({ root, ws, db } = mcpRoot("forkpoint-mcp-review-plan-"));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

const cases: [string, () => void][] = [
  [
    "a folder of ignored files where the checkpoint has a file",
    () => (fs.rmSync(path.join(ws, "out")), write(ws, "out/trace.log", "log\n")),
  ],
  ["a file grown past the size limit", () => fs.writeFileSync(path.join(ws, "out"), Buffer.alloc(17 << 20, 1))],
  ["a file ignored now, with another content", () => (write(ws, ".gitignore", "out\n"), write(ws, "out", "local\n"))],
];

describe("plan_rollback says when rollback is refused even with force", () => {
  it.each(cases)("%s", async (_what, change) => {
    write(ws, ".gitignore", "*.log\n");
    write(ws, "out", "captured\n");
    server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"]);
    const { client } = server;
    await ok(client, "checkpoint", { name: "one" });
    change();
    await ok(client, "checkpoint", { name: "two" });
    const before = fs.lstatSync(path.join(ws, "out"));

    const plan = await ok(client, "plan_rollback", { checkpoint: "one" });
    expect(plan.refusal).toBe("WORKSPACE_DRIFT");
    // Said first, not after file counts that leave out what forkpoint cannot capture ("would write back 0 files").
    const line = lineOf(await call(client, "plan_rollback", { checkpoint: "one" }));
    expect(line).toMatch(/^Rollback to .* is refused \(WORKSPACE_DRIFT\) even with force: true.*out/);
    expect(line).not.toMatch(/would write back/);
    expect(await refused(client, "rollback", { checkpoint: "one", force: true })).toMatch(/^WORKSPACE_DRIFT: cannot restore/);
    expect(fs.lstatSync(path.join(ws, "out")).size).toBe(before.size);
  });

  it("a rollback it refuses for nothing in the way is planned as fine", async () => {
    write(ws, "a.txt", "a1\n");
    server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"]);
    const { client } = server;
    await ok(client, "checkpoint", { name: "zero" });
    write(ws, ".gitignore", "build/\n");
    write(ws, "build/out.js", "built\n");
    await ok(client, "checkpoint", { name: "one" });
    await ok(client, "rollback", { checkpoint: "zero" });
    // build/out.js is visible now (no .gitignore), but "one" ignores it: no drift for a rollback there.
    const plan = await ok(client, "plan_rollback", { checkpoint: "one" });
    expect(plan).toMatchObject({ refusal: null, remove: [] });
    await ok(client, "rollback", { checkpoint: "one" });
    expect(fs.readFileSync(path.join(ws, "build/out.js"), "utf8")).toBe("built\n");
  });
});
