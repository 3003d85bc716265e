// From the MCP review: a session exported and imported into another database, or cloned, keeps the MCP metadata naming
// its directory but not its workspace (that stays in its own database). The server attaches its --workspace to it, with
// or without --session: a checkpoint it answers as saved holds the files, and a rollback to it writes them back.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openForkpoint, type Forkpoint } from "../../src/index.js";
import { freshPgDatabase, pgServer } from "../fixtures/postgres-database.js";
import { removeDir } from "../helpers.js";
import { connect, filesIn, mcpRoot, ok, refused, write, type Connected } from "./fixture.js";

const postgres = await pgServer();
let root: string;
let ws: string;
let db: string;
let server: Connected | undefined;

beforeEach(() => {
  ({ root, ws, db } = mcpRoot("forkpoint-mcp-review-imported-"));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

/** An MCP session of `ws` with one checkpoint, in its own database file; its id and export document. */
async function served(): Promise<{ id: string; doc: Awaited<ReturnType<Forkpoint["exportSession"]>> }> {
  const first = path.join(root, "first.db");
  write(ws, "a.txt", "v1\n");
  server = await connect("stdio", ["--workspace", ws, "--db", first, "--user", "alice"]);
  await ok(server.client, "checkpoint", { name: "one" });
  await server.close();
  server = undefined;
  const fp = openForkpoint({ path: first });
  try {
    const id = (await fp.listSessions({ userId: "alice" })).items[0]!.id;
    return { id, doc: await fp.exportSession(id, { userId: "alice" }) };
  } finally {
    await fp.close();
  }
}

/** A checkpoint the server answers as saved holds the files: a later edit is rolled back to it. */
async function checkpointsFiles(args: string[]): Promise<void> {
  server = await connect("stdio", args);
  expect(server.output()).toContain("just attached");
  await ok(server.client, "checkpoint", { name: "before" });
  write(ws, "a.txt", "v2\n");
  await ok(server.client, "checkpoint", { name: "after" });
  await ok(server.client, "rollback", { checkpoint: "before" });
  expect(filesIn(ws)).toEqual({ "a.txt": "v1\n" });
}

describe("forkpoint mcp on a session with the MCP metadata but no workspace", () => {
  it.each([
    ["found by its directory", false],
    ["named with --session", true],
  ])("imported into another database, %s: attached", async (_, named) => {
    const { id, doc } = await served();
    const fp = openForkpoint({ path: db });
    await fp.importSession(doc, { userId: "alice" });
    await fp.close();
    await checkpointsFiles(["--workspace", ws, "--db", db, "--user", "alice", ...(named ? ["--session", id] : [])]);
  });

  it("a rollback to an imported checkpoint, which holds no files, is refused without naming a scope rollback does not take", async () => {
    const { doc } = await served();
    const fp = openForkpoint({ path: db });
    await fp.importSession(doc, { userId: "alice" });
    await fp.close();
    server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"]);
    const refusal = await refused(server.client, "rollback", { checkpoint: "one" });
    expect(refusal).toMatch(/^VALIDATION_ERROR: (no checkpoint on the target's lineage captured|checkpoint \S+ holds no) /);
    expect(refusal).not.toMatch(/scope:|scope "/);
    expect(refusal).toContain("forkpoint rollback --scope conversation");
    expect(filesIn(ws)).toEqual({ "a.txt": "v1\n" });
  });

  it("a clone, its source deleted: attached", async () => {
    const { doc } = await served();
    const fp = openForkpoint({ path: db });
    const source = await fp.importSession(doc, { userId: "alice" });
    await fp.clone(source.id, { userId: "alice" });
    await fp.deleteSession(source.id, { userId: "alice" });
    await fp.close();
    await checkpointsFiles(["--workspace", ws, "--db", db, "--user", "alice"]);
  });

  it("its session deleted and imported again under its id while the server runs: checkpoint refuses", async () => {
    write(ws, "a.txt", "v1\n");
    server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"]);
    await ok(server.client, "checkpoint", { name: "one" });
    const fp = openForkpoint({ path: db });
    try {
      const id = (await fp.listSessions({ userId: "alice" })).items[0]!.id;
      const doc = await fp.exportSession(id, { userId: "alice" });
      await fp.deleteSession(id, { userId: "alice" });
      await fp.importSession(doc, { userId: "alice" });
    } finally {
      await fp.close();
    }
    expect(await refused(server.client, "checkpoint", { name: "two" })).toMatch(/^VALIDATION_ERROR: workspace: .*no workspace attached/);
  });

  it.skipIf(!postgres)("imported into PostgreSQL: attached", async () => {
    const { doc } = await served();
    const url = await freshPgDatabase();
    const fp = openForkpoint({ postgres: url });
    await fp.importSession(doc, { userId: "alice" });
    await fp.close();
    await checkpointsFiles(["--workspace", ws, "--postgres", url, "--user", "alice"]);
  });
});
