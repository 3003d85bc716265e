// Files changed since the last checkpoint (drift): a rollback refuses them as a tool error naming WORKSPACE_DRIFT and
// changes nothing; with force they are kept in a checkpoint of their own first, which a later rollback brings back.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempDir, removeDir } from "../helpers.js";
import { TRANSPORTS, connect, filesIn, ok, refused, write, type Connected } from "./fixture.js";

let root: string;
let ws: string;
let db: string;
let server: Connected | undefined;

beforeEach(() => {
  root = makeTempDir("forkpoint-mcp-drift-");
  ws = path.join(root, "project");
  db = path.join(root, "forkpoint.db");
  fs.mkdirSync(ws);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

const V1 = { "a.txt": "one\n", "lib/b.txt": "b\n" };
const V2 = { "a.txt": "two\n", "lib/b.txt": "b\n", "lib/c.txt": "c\n" };
const DRIFTED = { "a.txt": "edited by hand\n", "lib/c.txt": "c\n", "notes/new.md": "unsaved idea\n" };

describe.each(TRANSPORTS)("over %s", (transport) => {
  it("refuses drift, changing nothing; force keeps the drifted files in a checkpoint of their own", async () => {
    for (const [rel, text] of Object.entries(V1)) write(ws, rel, text);
    server = await connect(transport, ["--workspace", ws, "--db", db, "--user", "alice"]);
    const { client } = server;
    const v1 = (await ok(client, "checkpoint", { name: "v1" })).checkpoint;
    write(ws, "a.txt", V2["a.txt"]);
    write(ws, "lib/c.txt", V2["lib/c.txt"]);
    const v2 = (await ok(client, "checkpoint", { name: "v2" })).checkpoint;

    // Hand edits after v2, never checkpointed: an overwrite, a delete, a new folder.
    write(ws, "a.txt", DRIFTED["a.txt"]);
    fs.rmSync(path.join(ws, "lib/b.txt"));
    write(ws, "notes/new.md", DRIFTED["notes/new.md"]);

    const plan = await ok(client, "plan_rollback", { checkpoint: "v1" });
    expect(plan).toMatchObject({
      uncheckpointed: ["a.txt", "lib/b.txt", "notes/new.md"],
      lastCheckpointId: v2.id,
      refusal: "WORKSPACE_DRIFT",
    });

    const text = await refused(client, "rollback", { checkpoint: v1.id });
    expect(text).toMatch(/^WORKSPACE_DRIFT: /);
    expect(text).toContain("force: true");
    // A switch to the current branch moves no file: nothing to refuse.
    expect((await ok(client, "switch_branch", { branch: v1.branchId })).branch.id).toBe(v1.branchId);
    expect(filesIn(ws)).toEqual(DRIFTED);
    expect((await ok(client, "branches")).branches).toHaveLength(1);

    const forced = await ok(client, "rollback", { checkpoint: v1.id, force: true });
    expect(filesIn(ws)).toEqual(V1);
    expect(forced.savedDrift).toEqual({ checkpointId: expect.any(String), files: ["a.txt", "lib/b.txt", "notes/new.md"] });
    const saved = forced.savedDrift.checkpointId as string;
    const d = await ok(client, "diff", { from: v2.id, to: saved });
    expect([d.added, d.modified, d.deleted]).toEqual([["notes/new.md"], ["a.txt"], ["lib/b.txt"]]);

    // The saved checkpoint is a point of its own: undo goes back to it, and a rollback to it too.
    await ok(client, "undo");
    expect(filesIn(ws)).toEqual(DRIFTED);
    await ok(client, "redo");
    expect(filesIn(ws)).toEqual(V1);
    await ok(client, "rollback", { checkpoint: saved });
    expect(filesIn(ws)).toEqual(DRIFTED);
  });

  it("files never captured are never deleted: a file excluded from the start survives every rewind", async () => {
    write(ws, "a.txt", "one\n");
    write(ws, "secrets.env", "TOKEN=1\n");
    server = await connect(transport, ["--workspace", ws, "--db", db, "--user", "alice", "--exclude", "*.env", "--exclude", "tmp/"]);
    const { client } = server;
    await ok(client, "checkpoint", { name: "one" });
    write(ws, "a.txt", "two\n");
    write(ws, "secrets.env", "TOKEN=2\n");
    write(ws, "tmp/cache/x.bin", "cache\n");
    await ok(client, "checkpoint", { name: "two" });
    // Changing ignored files is no drift either.
    write(ws, "tmp/cache/y.bin", "more cache\n");
    await ok(client, "rollback", { checkpoint: "one" });
    expect(filesIn(ws)).toEqual({
      "a.txt": "one\n",
      "secrets.env": "TOKEN=2\n",
      "tmp/cache/x.bin": "cache\n",
      "tmp/cache/y.bin": "more cache\n",
    });
    await ok(client, "undo");
    expect(filesIn(ws)["a.txt"]).toBe("two\n");
  });
});

describe("the last checkpoint of the current branch", () => {
  it("is found behind a thousand newer checkpoints on another branch, so drift is still seen", async () => {
    write(ws, "a.txt", "a\n");
    server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"]);
    const { client } = server;
    const a0 = (await ok(client, "checkpoint", { name: "A0" })).checkpoint;
    write(ws, "b.txt", "b\n");
    const a1 = (await ok(client, "checkpoint", { name: "A1" })).checkpoint;
    await ok(client, "rollback", { checkpoint: "A0" });
    for (let i = 0; i < 1001; i++) await ok(client, "checkpoint", {});
    await ok(client, "switch_branch", { branch: a0.branchId });
    write(ws, "a.txt", "edited by hand\n");

    const plan = await ok(client, "plan_rollback", { checkpoint: "A0" });
    expect(plan).toMatchObject({ uncheckpointed: ["a.txt"], lastCheckpointId: a1.id, refusal: "WORKSPACE_DRIFT" });
    expect(await refused(client, "rollback", { checkpoint: "A0" })).toMatch(/^WORKSPACE_DRIFT: /);
  });
});
