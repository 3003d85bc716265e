// The CLI on a PostgreSQL database (`--postgres URL` or FORKPOINT_POSTGRES): the same commands as on a file; reads
// write nothing, moves go through, and a file and a database are not given together.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { dumpStore } from "../fixtures/backend.js";
import { freshPgDatabase, pgServer } from "../fixtures/postgres-database.js";
import { makeTempDir } from "../helpers.js";
import { runInProcess } from "./in-process.js";

/** How many tables the database at `url` holds, outside PostgreSQL's own catalogs. */
async function tablesIn(url: string): Promise<{ n: number }[]> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    return (
      await admin.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`,
      )
    ).rows;
  } finally {
    await admin.end();
  }
}

describe.skipIf(!(await pgServer()))("forkpoint --postgres", () => {
  it("lists, reads, rolls back and verifies a session on PostgreSQL; reads leave the database as it was", async () => {
    const url = await freshPgDatabase();
    const fp = openForkpoint({ postgres: url });
    const s = await fp.createSession({ userId: "ann", title: "On PostgreSQL" });
    await s.append({ role: "user", content: "hello" });
    const cp = await s.checkpoint({ name: "start" });
    await s.append({ role: "user", content: "more" });
    await fp.close();
    const json = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
      const r = await runInProcess(["--json", ...args], { env });
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
      return JSON.parse(r.stdout) as any;
    };

    /** Every row, read through a read-only handle (which writes nothing). */
    const dump = async () => {
      const reader = openForkpoint({ postgres: url, readonly: true });
      try {
        return await dumpStore(reader);
      } finally {
        await reader.close();
      }
    };
    const before = await dump();
    expect((await json(["--postgres", url, "sessions", "-u", "ann"])).items.map((x: { id: string }) => x.id)).toEqual([s.id]);
    // The environment names it too; reads write nothing there (no migration, no recovery).
    expect((await json(["history", s.id, "-u", "ann"], { FORKPOINT_POSTGRES: url })).items).toHaveLength(2);
    expect(await dump()).toEqual(before);

    await json(["--postgres", url, "rollback", s.id, cp.id, "-u", "ann"]);
    expect((await json(["--postgres", url, "history", s.id, "-u", "ann"])).items.map((m: { content: string }) => m.content)).toEqual([
      "hello",
    ]);
    expect(await json(["--postgres", url, "verify"])).toMatchObject({ ok: true });
  });

  it("reads an empty database as no forkpoint database, and creates nothing there", async () => {
    const url = await freshPgDatabase();
    const r = await runInProcess(["--postgres", url, "sessions", "-u", "ann"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("no forkpoint schema");
    const fp = openForkpoint({ postgres: url, readonly: true });
    await expect(fp.listSessions({ userId: "ann" })).rejects.toMatchObject({ name: "DatabaseError", code: "NOT_A_DATABASE" });
    await fp.close();
    expect(await tablesIn(url)).toEqual([{ n: 0 }]);
  });

  it("refuses write commands on a database without forkpoint's schema, creating nothing (as a missing file)", async () => {
    const url = await freshPgDatabase();
    for (const verb of [["prune"], ["recover"], ["delete", "ses_x", "-u", "x"], ["rollback", "ses_x", "cp_x", "-u", "x"]]) {
      const r = await runInProcess(["--postgres", url, ...verb]);
      expect(r.status, verb[0]).toBe(1);
      expect(r.stderr, verb[0]).toContain("no forkpoint schema");
    }
    expect(await tablesIn(url)).toEqual([{ n: 0 }]);
  });

  it("refuses --db with --postgres as a usage error (exit 2)", async () => {
    const r = await runInProcess(["--db", "/tmp/x.db", "--postgres", "postgres://127.0.0.1:1/x", "sessions", "-u", "ann"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("--db or --postgres");
  });

  it("refuses FORKPOINT_DB with FORKPOINT_POSTGRES unless a flag chooses; a flag wins over the environment", async () => {
    const url = await freshPgDatabase();
    const fp = openForkpoint({ postgres: url });
    const s = await fp.createSession({ userId: "ann" });
    await fp.close();
    const file = join(makeTempDir("forkpoint-pg-env-"), "missing.db");
    const env = { FORKPOINT_DB: file, FORKPOINT_POSTGRES: url };
    const both = await runInProcess(["sessions", "-u", "ann"], { env });
    expect([both.status, both.stderr]).toEqual([2, expect.stringContaining("FORKPOINT_DB and FORKPOINT_POSTGRES are both set")]);
    // --db names the file (missing here: its own usage error); --postgres the server.
    expect((await runInProcess(["--db", file, "sessions", "-u", "ann"], { env })).stderr).toContain(`no database at ${file}`);
    const onServer = await runInProcess(["--postgres", url, "--json", "sessions", "-u", "ann"], { env });
    expect([onServer.status, onServer.stderr]).toEqual([0, ""]);
    expect(JSON.parse(onServer.stdout).items.map((x: { id: string }) => x.id)).toEqual([s.id]);
  });

  it("demo names the PostgreSQL database (password left out), and the commands it suggests run there as printed", async () => {
    const url = await freshPgDatabase();
    const withPassword = Object.assign(new URL(url), { password: "s3cret" }).toString();
    const files = mkdtempSync(join(tmpdir(), "forkpoint-pg-demo-"));
    try {
      const r = await runInProcess(["--postgres", url, "demo", "--files", files]);
      expect([r.status, r.stderr]).toEqual([0, ""]);
      expect(r.stdout.split("\n")[0]).toBe(`forkpoint demo — database ${url}`);
      const json = await runInProcess(["--postgres", withPassword, "--json", "demo", "--files", files]);
      expect(JSON.parse(json.stdout).database).toBe(withPassword.replace("s3cret", "***"));
      const suggested = r.stdout.split("\n").filter((l) => l.startsWith("  forkpoint "));
      expect(suggested.length).toBeGreaterThanOrEqual(10);
      for (const line of suggested) {
        const split = spawnSync("sh", ["-c", `forkpoint() { printf '%s\\0' "$@"; }\n${line}`], { encoding: "utf8" });
        const args = split.stdout.split("\0").slice(0, -1);
        // The web view serves until stopped: tests/ui/postgres.test.ts serves a PostgreSQL database.
        if (args.includes("ui")) continue;
        const ran = await runInProcess(args);
        expect([line, ran.status, ran.stderr]).toEqual([line, 0, ""]);
      }
    } finally {
      rmSync(files, { recursive: true, force: true });
    }
  });
});
