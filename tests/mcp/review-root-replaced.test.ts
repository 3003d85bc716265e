// From the MCP review: the workspace directory itself replaced while the server runs (`cd .. && rm -rf app && mkdir
// app`, or `mv app app.old && mkdir app`, as re-cloning or re-scaffolding a project does). Edits made in the new
// directory must be seen: a checkpoint that stores the old content says "saved" for work a rewind then cannot bring back.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir } from "../helpers.js";
import { connect, ok, type Connected, mcpRoot } from "./fixture.js";

let root: string;
let ws: string;
let db: string;
let server: Connected | undefined;

beforeEach(() => {
  ({ root, ws, db } = mcpRoot("forkpoint-mcp-review-root-", "app"));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

describe("the workspace directory replaced while the server runs", () => {
  it.each([
    ["deleted and made again", () => fs.rmSync(ws, { recursive: true })],
    ["moved away, a new one made", () => fs.renameSync(ws, `${ws}.old`)],
  ])("%s: later edits are seen and checkpointed", async (_how, away) => {
    fs.writeFileSync(path.join(ws, "notes.txt"), "one\n");
    server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"]);
    const { client } = server;
    await ok(client, "checkpoint", { name: "one" });
    // A second call: the server now follows changes through its watcher.
    await ok(client, "diff", { from: "one" });

    away();
    fs.mkdirSync(ws);
    fs.writeFileSync(path.join(ws, "notes.txt"), "one\n");
    fs.writeFileSync(path.join(ws, "fresh.txt"), "a file of the new directory\n");
    expect((await ok(client, "diff", { from: "one" })).added).toEqual(["fresh.txt"]);
    await ok(client, "checkpoint", { name: "fresh" });

    fs.writeFileSync(path.join(ws, "notes.txt"), "the agent's work\n");
    expect((await ok(client, "diff", { from: "fresh" })).modified).toEqual(["notes.txt"]);
    const work = (await ok(client, "checkpoint", { name: "work" })).checkpoint;

    // The agent deletes the file, then rolls back to the checkpoint that said it saved its work.
    fs.rmSync(path.join(ws, "notes.txt"));
    await ok(client, "rollback", { checkpoint: work.id, force: true });
    expect(fs.readFileSync(path.join(ws, "notes.txt"), "utf8")).toBe("the agent's work\n");
  });
});
