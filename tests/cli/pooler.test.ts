// The CLI and the MCP server behind a transaction-mode PgBouncer: `--no-prepared-statements` (or
// FORKPOINT_PREPARED_STATEMENTS=false) opens PostgreSQL as `preparedStatements: false` does, command after command.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { freshPgDatabase, pgPooler } from "../fixtures/postgres-database.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { connect, filesIn, ok, write } from "../mcp/fixture.js";
import { runInProcess } from "./in-process.js";

/** A fresh database's URL through the run's pooler. */
async function pooled(): Promise<string> {
  const direct = new URL(await freshPgDatabase());
  const url = new URL((await pgPooler())!);
  url.pathname = direct.pathname;
  return url.toString();
}

describe.skipIf(!(await pgPooler()))("forkpoint --no-prepared-statements through a transaction-mode pooler", () => {
  it("reads, verifies, rolls back and reads again, each command a new process on the pooler's shared connections", async () => {
    const url = await pooled();
    const fp = openForkpoint({ postgres: url, preparedStatements: false });
    const s = await fp.createSession({ userId: "ann" });
    await s.append({ role: "user", content: "hello" });
    const cp = await s.checkpoint({ name: "start" });
    await s.append({ role: "user", content: "more" });
    await fp.close();
    const json = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
      const r = await runInProcess(["--json", "--postgres", url, ...args], { env });
      expect([args[0], r.status, r.stderr]).toEqual([args[0], 0, ""]);
      return JSON.parse(r.stdout) as any;
    };
    const flag = ["--no-prepared-statements"];
    for (let i = 0; i < 3; i++) expect(await json([...flag, "verify"])).toMatchObject({ ok: true });
    expect((await json([...flag, "history", s.id, "-u", "ann"])).items).toHaveLength(2);
    await json([...flag, "rollback", s.id, cp.id, "-u", "ann"]);
    // The environment says it too.
    const env = { FORKPOINT_PREPARED_STATEMENTS: "false" };
    expect((await json(["history", s.id, "-u", "ann"], env)).items.map((m: { content: string }) => m.content)).toEqual(["hello"]);
    expect(await json(["verify"], env)).toMatchObject({ ok: true });
    const bad = await runInProcess(["--postgres", url, "verify"], { env: { FORKPOINT_PREPARED_STATEMENTS: "no" } });
    expect([bad.status, bad.stderr]).toEqual([2, expect.stringContaining("FORKPOINT_PREPARED_STATEMENTS must be true or false")]);
  });

  it("without it, the prepared statements' clash is a CANNOT_OPEN that names the option", async () => {
    const url = await pooled();
    let error: unknown;
    // Each handle's connections are new to the pooler, whose server connections keep the statements the one before
    // prepared: preparing them again there clashes.
    for (let i = 0; i < 10 && error === undefined; i++) {
      const fp = openForkpoint({ postgres: url });
      try {
        await (await fp.createSession({ userId: "ann" })).append({ role: "user", content: "hello" });
      } catch (e) {
        error = e;
      } finally {
        await fp.close().catch(() => undefined);
      }
    }
    expect(error).toMatchObject({ name: "DatabaseError", code: "CANNOT_OPEN" });
    expect((error as Error).message).toMatch(
      /prepared statement .*transaction-mode pooler.*preparedStatements: false.*--no-prepared-statements/,
    );
  });

  it("serves the MCP tools, its files worker included, through the pooler", async () => {
    const root = makeTempDir("forkpoint-mcp-pooler-");
    const ws = path.join(root, "project");
    fs.mkdirSync(ws);
    const server = await connect("stdio", ["--workspace", ws, "--user", "alice", "--postgres", await pooled(), "--no-prepared-statements"]);
    try {
      write(ws, "a.txt", "one\n");
      await ok(server.client, "checkpoint", { name: "one" });
      write(ws, "a.txt", "two\n");
      await ok(server.client, "checkpoint", { name: "two" });
      expect(await ok(server.client, "plan_rollback", { checkpoint: "one" })).toMatchObject({ restore: ["a.txt"] });
      await ok(server.client, "rollback", { checkpoint: "one" });
      expect(filesIn(ws)).toEqual({ "a.txt": "one\n" });
    } finally {
      await server.close();
      removeDir(root);
    }
  });
});
