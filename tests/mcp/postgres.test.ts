// forkpoint mcp on PostgreSQL (--postgres URL): a fresh database gets its schema, and the tools work as on a file.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { makeTempDir, removeDir } from "../helpers.js";
import { freshPgDatabase, pgServer } from "../fixtures/postgres-database.js";
import { childEnv, connect, filesIn, mcpArgs, ok, refused, startHttp, write, type Connected } from "./fixture.js";

let root: string;
let ws: string;
let server: Connected | undefined;

beforeEach(() => {
  root = makeTempDir("forkpoint-mcp-pg-");
  ws = path.join(root, "project");
  fs.mkdirSync(ws);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

describe.skipIf(!(await pgServer()))("forkpoint mcp --postgres", () => {
  it("checkpoints, refuses drift, rolls back and finds the session again after a restart", async () => {
    const url = await freshPgDatabase();
    write(ws, "a.txt", "one\n");
    const args = ["--workspace", ws, "--user", "alice", "--postgres", url];
    server = await connect("stdio", args);
    await ok(server.client, "checkpoint", { name: "one" });
    write(ws, "a.txt", "two\n");
    write(ws, "dir/b.txt", "b\n");
    await ok(server.client, "checkpoint", { name: "two" });
    write(ws, "a.txt", "drift\n");
    // Files are compared in a worker thread with a handle of its own on the same database.
    expect(await ok(server.client, "plan_rollback", { checkpoint: "one" })).toMatchObject({
      restore: ["a.txt"],
      remove: ["dir/b.txt"],
      uncheckpointed: ["a.txt"],
      refusal: "WORKSPACE_DRIFT",
    });
    expect((await ok(server.client, "diff", { from: "two" })).patch).toContain("+drift");
    expect(await refused(server.client, "rollback", { checkpoint: "one" })).toMatch(/^WORKSPACE_DRIFT: /);
    await server.close();

    server = await connect("http", args);
    const forced = await ok(server.client, "rollback", { checkpoint: "one", force: true });
    expect(filesIn(ws)).toEqual({ "a.txt": "one\n" });
    await ok(server.client, "undo");
    expect(filesIn(ws)).toEqual({ "a.txt": "drift\n", "dir/b.txt": "b\n" });
    const listed = await ok(server.client, "list_checkpoints");
    expect(listed.checkpoints.map((c: { name: string }) => c.name)).toEqual(["forced: drift before rollback", "two", "one"]);
    expect(listed.checkpoints[0].id).toBe(forced.savedDrift.checkpointId);
  });

  it("makes one session for servers started at once from other data directories", async () => {
    const url = await freshPgDatabase();
    write(ws, "a.txt", "one\n");
    const args = ["--workspace", ws, "--user", "alice", "--postgres", url];
    const started = await Promise.all([0, 1, 2].map((i) => connect("stdio", args, { XDG_DATA_HOME: path.join(root, `data-${i}`) })));
    try {
      const ids = started.map((s) => /session (ses_\S+)/.exec(s.output())![1]);
      expect(new Set(ids).size).toBe(1);
      for (const [i, s] of started.entries()) await ok(s.client, "checkpoint", { name: `c${i}` });
      expect((await ok(started[0]!.client, "list_checkpoints")).checkpoints).toHaveLength(3);
    } finally {
      for (const s of started) await s.close();
    }
  });

  it("masks a password given in the URL's query (?password=) as one in its user info, in text and under --json", async () => {
    const url = `${await freshPgDatabase()}?password=s3cret-in-query`;
    const args = ["--workspace", ws, "--user", "alice", "--postgres", url];
    const http = await startHttp(args);
    try {
      // The banner is on stderr, which may come after the URL and token on stdout.
      await vi.waitFor(() => expect(http.output()).toContain("password=***"), { timeout: 10_000 });
      expect(http.output()).not.toContain("s3cret");
    } finally {
      await http.stop();
    }
    const child = spawn(process.execPath, mcpArgs([...args, "--http", "--json"]), { env: childEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    const printed = await new Promise<{ database: string }>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        try {
          resolve(JSON.parse(out) as { database: string });
        } catch {
          // Not all of it yet.
        }
      });
      child.once("exit", (code) => reject(new Error(`forkpoint mcp --http --json exited (${code}): ${out}`)));
    });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
    expect(new URL(printed.database).searchParams.get("password")).toBe("***");
    expect(out).not.toContain("s3cret");
  });
});
