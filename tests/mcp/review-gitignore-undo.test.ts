// From the MCP review: a rollback past the checkpoint that added a .gitignore line deletes that .gitignore, so the
// build output it ignored becomes visible (not captured: forkpoint never saw it). Undo must take the rollback back:
// not be refused for that file (WORKSPACE_DRIFT, which the agent can only get past by checkpointing it), nor delete it;
// nor may a rollback to a checkpoint whose .gitignore ignores a file an older one captured.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir } from "../helpers.js";
import { connect, ok, refused, write, type Connected, mcpRoot } from "./fixture.js";

let root: string;
let ws: string;
let db: string;
let server: Connected | undefined;

beforeEach(() => {
  ({ root, ws, db } = mcpRoot("forkpoint-mcp-review-gitignore-"));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

const read = (rel: string) => fs.readFileSync(path.join(ws, rel), "utf8");

describe("a rollback that deletes a .gitignore, then undo", () => {
  it("takes the rollback back, leaving the build output it had ignored as it is", async () => {
    write(ws, "a.txt", "a1\n");
    server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"]);
    const { client } = server;
    await ok(client, "checkpoint", { name: "zero" });
    write(ws, ".gitignore", "build/\n");
    write(ws, "build/out.js", "built\n");
    write(ws, "a.txt", "a2\n");
    await ok(client, "checkpoint", { name: "one" });

    await ok(client, "rollback", { checkpoint: "zero" });
    expect(fs.existsSync(path.join(ws, ".gitignore"))).toBe(false);
    expect(read("build/out.js")).toBe("built\n");

    // The plan agrees with the move: nothing in the way, nothing changed since the last checkpoint that it moves.
    const undo = await ok(client, "undo");
    expect(undo.files.deleted).toEqual([]);
    expect(read(".gitignore")).toBe("build/\n");
    expect(read("a.txt")).toBe("a2\n");
    expect(read("build/out.js")).toBe("built\n");

    // Back where it was: no drift, and redo goes forward again, the build output still untouched.
    expect((await ok(client, "diff", { from: "one" })).added).toEqual([]);
    await ok(client, "redo");
    expect(read("a.txt")).toBe("a1\n");
    expect(read("build/out.js")).toBe("built\n");
  });

  it("still refuses a file the agent wrote that the target does not ignore", async () => {
    write(ws, "a.txt", "a1\n");
    server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"]);
    const { client } = server;
    await ok(client, "checkpoint", { name: "zero" });
    write(ws, ".gitignore", "build/\n");
    await ok(client, "checkpoint", { name: "one" });
    await ok(client, "rollback", { checkpoint: "zero" });
    write(ws, "src/new.ts", "unsaved\n");
    expect(await refused(client, "undo")).toMatch(/^WORKSPACE_DRIFT: .*src\/new\.ts/);
    expect(read("src/new.ts")).toBe("unsaved\n");
  });

  it("leaves a file captured before the .gitignore line as it is, and plans what it does", async () => {
    write(ws, "ign.log", "A\n");
    write(ws, "keep.txt", "k\n");
    server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"]);
    const { client } = server;
    await ok(client, "checkpoint", { name: "one" });
    write(ws, ".gitignore", "*.log\n");
    await ok(client, "checkpoint", { name: "two" });

    // ign.log is there as `one` holds it: the rollback writes nothing back, as its plan says.
    expect(await ok(client, "plan_rollback", { checkpoint: "one" })).toMatchObject({ restore: [], remove: [".gitignore"] });
    expect((await ok(client, "rollback", { checkpoint: "one" })).files).toMatchObject({ written: [], deleted: [".gitignore"] });
    // `two` never captured it: neither the plan, the undo nor a rollback there deletes it.
    expect(await ok(client, "plan_rollback", { checkpoint: "two" })).toMatchObject({ restore: [".gitignore"], remove: [] });
    expect((await ok(client, "undo")).files).toMatchObject({ written: [".gitignore"], deleted: [] });
    await ok(client, "redo");
    expect((await ok(client, "rollback", { checkpoint: "two" })).files).toMatchObject({ deleted: [] });
    expect(read("ign.log")).toBe("A\n");
  });
});
