// The session of a workspace directory and user is found again after a restart (by the directory's real path, or named
// with --session); the default database lives in the user's data directory, outside the workspace.
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempDir, removeDir } from "../helpers.js";
import { TRANSPORTS, childEnv, connect, filesIn, mcpArgs, ok, write, type Connected } from "./fixture.js";

let root: string;
let ws: string;
let data: string;
let server: Connected | undefined;

beforeEach(() => {
  root = makeTempDir("forkpoint-mcp-restart-");
  ws = path.join(root, "project");
  data = path.join(root, "xdg-data");
  fs.mkdirSync(ws);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

/** The database `forkpoint mcp` uses when given none: $XDG_DATA_HOME/forkpoint/forkpoint.db. */
const defaultDb = () => path.join(data, "forkpoint", "forkpoint.db");

describe.each(TRANSPORTS)("over %s", (transport) => {
  it("finds the directory's session again after a restart, by its real path, in the default database", async () => {
    write(ws, "a.txt", "one\n");
    const env = { XDG_DATA_HOME: data };
    server = await connect(transport, ["--workspace", ws, "--user", "alice"], env);
    const one = (await ok(server.client, "checkpoint", { name: "one" })).checkpoint;
    expect(server.output()).toContain("just attached");
    await server.close();
    expect(fs.existsSync(defaultDb())).toBe(true);

    // Edited while no server ran: still drift after the restart (the workspace is not attached anew).
    write(ws, "a.txt", "edited while stopped\n");
    // Started again through another spelling of the same directory (a symbolic link, a relative path).
    const link = path.join(root, "link");
    fs.symlinkSync(ws, link);
    server = await connect(transport, ["--workspace", link, "--user", "alice"], env);
    expect(server.output()).not.toContain("just attached");
    const listed = await ok(server.client, "list_checkpoints");
    expect(listed.checkpoints.map((c: { id: string }) => c.id)).toEqual([one.id]);
    const plan = await ok(server.client, "plan_rollback", { checkpoint: "one" });
    expect(plan).toMatchObject({ uncheckpointed: ["a.txt"], refusal: "WORKSPACE_DRIFT" });
    await ok(server.client, "rollback", { checkpoint: "one", force: true });
    expect(filesIn(ws)).toEqual({ "a.txt": "one\n" });
    await server.close();

    // Another user, or another directory, has a session of its own.
    server = await connect(transport, ["--workspace", ws, "--user", "bob"], env);
    expect((await ok(server.client, "list_checkpoints")).checkpoints).toEqual([]);
    await server.close();
    server = undefined;
    expect(filesIn(ws)).toEqual({ "a.txt": "one\n" });
  });

  it("uses the session named with --session, and FORKPOINT_DB for the database", async () => {
    write(ws, "a.txt", "one\n");
    const db = path.join(root, "named.db");
    server = await connect(transport, ["--workspace", ws, "--user", "alice"], { FORKPOINT_DB: db });
    const cp = (await ok(server.client, "checkpoint", { name: "one" })).checkpoint;
    const sessionId = /session (ses_\S+)/.exec(server.output())![1]!;
    await server.close();
    server = await connect(transport, ["--workspace", ws, "--user", "alice", "--session", sessionId], { FORKPOINT_DB: db });
    expect((await ok(server.client, "list_checkpoints")).checkpoints[0]).toMatchObject({ id: cp.id });
    await server.close();
    server = undefined;
    expect(fs.existsSync(defaultDb())).toBe(false);
  });
});

describe("refusals at start", () => {
  const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    spawnSync(process.execPath, mcpArgs(args), { encoding: "utf8", env: childEnv({ XDG_DATA_HOME: data, ...env }), input: "" });

  it("a missing directory, another directory's session, or --port without --http: one line, no database written", async () => {
    const missing = run(["--workspace", path.join(root, "nope"), "--user", "alice", "--db", path.join(root, "x.db")]);
    expect([missing.status, missing.stderr.trim()]).toEqual([1, `error WORKSPACE_REFUSED: no directory at ${path.join(root, "nope")}`]);
    expect(fs.existsSync(path.join(root, "x.db"))).toBe(false);
    const top = run(["--workspace", "/", "--user", "alice", "--db", path.join(root, "x.db")]);
    expect([top.status, top.stderr.trim()]).toEqual([1, "error WORKSPACE_REFUSED: / is the file system's root, not a project directory"]);
    expect(fs.existsSync(path.join(root, "x.db"))).toBe(false);
    const usage = run(["--workspace", ws, "--port", "8080"]);
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain("--port needs --http");
    for (const bad of ["99999", "0x4E21", "1e3", " 8080"]) {
      const range = run(["--workspace", ws, "--http", "--port", bad]);
      expect([range.status, range.stderr]).toEqual([2, expect.stringContaining("must be a port number, 1 to 65535")]);
    }

    const other = path.join(root, "other");
    fs.mkdirSync(other);
    write(other, "x.txt", "x\n");
    server = await connect("stdio", ["--workspace", other, "--user", "alice"], { XDG_DATA_HOME: data });
    const sessionId = /session (ses_\S+)/.exec(server.output())![1]!;
    await server.close();
    server = undefined;
    const wrong = run(["--workspace", ws, "--user", "alice", "--session", sessionId]);
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toContain(`keeps the workspace ${fs.realpathSync(other)}`);
  });
});
