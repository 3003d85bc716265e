// The first start on a directory: servers started at once all take the same new session; a file the workspace cannot
// store (over the size limit) is left out and said, and never stops the server nor a rewind.
// The exclude list is fixed once the workspace has a checkpoint, or a hand edit no checkpoint keeps: a new one is
// refused then, saying what to do instead.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { nodeArgs } from "../fixtures/compiled.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { MAIN, call, childEnv, connect, filesIn, lineOf, mcpArgs, ok, refused as refusal, write, type Connected } from "./fixture.js";

let root: string;
let ws: string;
let db: string;
let data: string;
const servers: Connected[] = [];

beforeEach(() => {
  root = makeTempDir("forkpoint-mcp-first-start-");
  ws = path.join(root, "project");
  db = path.join(root, "forkpoint.db");
  data = path.join(root, "xdg-data");
  fs.mkdirSync(ws);
});
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  removeDir(root);
});

const sessionOf = (s: Connected) => /session (ses_\S+)/.exec(s.output())![1]!;

/** The sessions of `userId` in the test's database, read through the public API. */
async function sessionsOf(userId: string): Promise<string[]> {
  const fp = openForkpoint({ path: db });
  try {
    return (await fp.listSessions({ userId })).items.map((s) => s.id);
  } finally {
    await fp.close();
  }
}

const run = (args: string[]) =>
  spawnSync(process.execPath, mcpArgs(["--workspace", ws, "--db", db, "--user", "alice", ...args]), {
    encoding: "utf8",
    env: childEnv({ XDG_DATA_HOME: data }),
    input: "",
  });

describe("servers started at once on a new directory", () => {
  it("all take the one session made for it, which a restart finds again", async () => {
    for (let i = 0; i < 400; i++) write(ws, `src/f${i}.txt`, `${i}\n`);
    const args = ["--workspace", ws, "--db", db, "--user", "alice"];
    servers.push(...(await Promise.all([0, 1, 2, 3].map(() => connect("stdio", args, { XDG_DATA_HOME: data })))));
    const ids = servers.map(sessionOf);
    expect(new Set(ids).size).toBe(1);
    expect(servers.filter((s) => s.output().includes("just attached"))).toHaveLength(1);
    for (const [i, s] of servers.entries()) await ok(s.client, "checkpoint", { name: `from server ${i}` });
    for (const s of servers.splice(0)) await s.close();
    expect(await sessionsOf("alice")).toEqual([ids[0]]);
    // No lock file is left behind.
    expect(fs.readdirSync(path.join(data, "forkpoint", "locks"))).toEqual([]);

    servers.push(await connect("stdio", args, { XDG_DATA_HOME: data }));
    expect(sessionOf(servers[0]!)).toBe(ids[0]);
    expect((await ok(servers[0]!.client, "list_checkpoints")).checkpoints).toHaveLength(4);
  });
});

describe("servers started at once under other data directories, on one database", () => {
  it("take one session made for the directory: no lock file is shared, the database decides", async () => {
    for (let i = 0; i < 400; i++) write(ws, `src/f${i}.txt`, `${i}\n`);
    const args = ["--workspace", ws, "--db", db, "--user", "alice"];
    const started = [0, 1, 2, 3].map((i) => connect("stdio", args, { XDG_DATA_HOME: `${data}-${i}` }));
    servers.push(...(await Promise.all(started)));
    const ids = servers.map(sessionOf);
    expect(new Set(ids).size).toBe(1);
    for (const [i, s] of servers.entries()) await ok(s.client, "checkpoint", { name: `from server ${i}` });
    for (const s of servers.splice(0)) await s.close();
    expect(await sessionsOf("alice")).toEqual([ids[0]]);
    servers.push(await connect("stdio", args, { XDG_DATA_HOME: data }));
    expect(sessionOf(servers[0]!)).toBe(ids[0]);
    expect((await ok(servers[0]!.client, "list_checkpoints")).checkpoints).toHaveLength(4);
  });
});

describe("a first start on a workspace holding a file forkpoint cannot store", () => {
  it("starts, says the file is left out at each checkpoint and diff, and no rewind touches it", async () => {
    write(ws, "a.txt", "one\n");
    // Over the 16 MiB a workspace file may have (sparse: no disk space used).
    fs.writeFileSync(path.join(ws, "big.bin"), "");
    fs.truncateSync(path.join(ws, "big.bin"), 17_000_000);
    const s = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"], { XDG_DATA_HOME: data });
    servers.push(s);
    expect(s.output()).toContain("just attached");
    const skipped = [{ path: "big.bin", reason: "is 17000000 bytes, over the limit of 16777216" }];
    const r = await call(s.client, "checkpoint", { name: "c0" });
    expect(r.structuredContent).toMatchObject({ checkpoint: { name: "c0" }, skipped });
    expect(lineOf(r)).toMatch(
      /; not captured, as forkpoint cannot store it: big\.bin \(is 17000000 bytes, over the limit of 16777216\)\.$/,
    );
    write(ws, "a.txt", "two\n");
    expect(await ok(s.client, "diff", { from: "c0" })).toMatchObject({ added: [], modified: ["a.txt"], deleted: [], skipped });
    await ok(s.client, "checkpoint", { name: "c1" });
    await ok(s.client, "rollback", { checkpoint: "c0" });
    expect(fs.readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("one\n");
    expect(fs.statSync(path.join(ws, "big.bin")).size).toBe(17_000_000);
    expect(await sessionsOf("alice")).toEqual([sessionOf(s)]);
  });
});

describe("a later --exclude", () => {
  it("is applied while the workspace has no checkpoint yet", async () => {
    write(ws, "a.txt", "one\n");
    write(ws, "out/app.js", "built 1\n");
    servers.push(await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"], { XDG_DATA_HOME: data }));
    const id = sessionOf(servers[0]!);
    await servers.pop()!.close();

    const s = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice", "--exclude", "out/"], { XDG_DATA_HOME: data });
    servers.push(s);
    expect(sessionOf(s)).toBe(id);
    expect(s.output()).toContain("the workspace had no checkpoint yet: attached again with the exclude list out/ .git");
    await ok(s.client, "checkpoint", { name: "one" });
    write(ws, "out/app.js", "built 2\n");
    write(ws, "a.txt", "two\n");
    await ok(s.client, "checkpoint", { name: "two" });
    await ok(s.client, "rollback", { checkpoint: "one" });
    // out/ is left out now: the rewind leaves it as it is.
    expect(filesIn(ws)).toEqual({ "a.txt": "one\n", "out/app.js": "built 2\n" });
  });

  it("taken by a second server while the first runs refuses the first's tools, which would capture by other rules", async () => {
    write(ws, "a.txt", "one\n");
    write(ws, "build/out.js", "built\n");
    const first = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice", "--exclude", "build/"], {
      XDG_DATA_HOME: data,
    });
    servers.push(first);
    const second = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice", "--exclude", "dist/"], {
      XDG_DATA_HOME: data,
    });
    servers.push(second);
    expect(second.output()).toContain("attached again with the exclude list dist/ .git");
    const text = await refusal(first.client, "checkpoint", { name: "by the first" });
    expect(text).toMatch(
      /^WORKSPACE_REFUSED: another server attached this workspace again with the exclude list dist\/ since this one started with build\//,
    );
    // Nothing was captured by the first: the second's checkpoint is the only one, under its own list.
    await ok(second.client, "checkpoint", { name: "by the second" });
    const listed = await ok<{ checkpoints: { name: string }[] }>(second.client, "list_checkpoints", {});
    expect(listed.checkpoints.map((c) => c.name)).toEqual(["by the second"]);
  });

  it("is refused over a hand edit no checkpoint keeps, naming the edit and both ways out; nothing changes", async () => {
    write(ws, "a.txt", "one\n");
    write(ws, "out/app.js", "built 1\n");
    const first = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"], { XDG_DATA_HOME: data });
    const id = sessionOf(first);
    await first.close();
    write(ws, "a.txt", "edited by hand\n");

    const refused = run(["--exclude", "out/"]);
    expect(refused.status).toBe(1);
    const line = refused.stderr.trim();
    expect(line).toMatch(/^error WORKSPACE_REFUSED: the workspace was attached with another exclude list \(no --exclude\)/);
    expect(line).toContain("changed by hand since forkpoint last saw it (a.txt)");
    expect(line).not.toContain("then attach");
    expect(line).toContain("write the new patterns in a .gitignore file in the workspace");
    expect(line).toContain(`forkpoint delete ${id} -u alice --db ${db}`);
    // Nothing changed: the old list kept, and the old list starts as before.
    const fp = openForkpoint({ path: db });
    try {
      const info = await (await fp.getSession(id, { userId: "alice" })).info();
      expect(info.metadata).toMatchObject({ mcpExclude: [".git"] });
    } finally {
      await fp.close();
    }
    const again = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"], { XDG_DATA_HOME: data });
    servers.push(again);
    expect(sessionOf(again)).toBe(id);
    expect(again.output()).not.toContain("just attached");
  });

  it("is refused once the workspace has checkpoints, naming what to do instead; the same list is fine", async () => {
    write(ws, "a.txt", "one\n");
    write(ws, "out/app.js", "built 1\n");
    const first = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice", "--exclude", "*.log"], { XDG_DATA_HOME: data });
    await ok(first.client, "checkpoint", { name: "one" });
    const id = sessionOf(first);
    await first.close();

    const refused = run(["--exclude", "*.log", "--exclude", "out/"]);
    expect(refused.status).toBe(1);
    const line = refused.stderr.trim();
    expect(line).not.toContain("\n");
    expect(line).toMatch(/^error WORKSPACE_REFUSED: the workspace has checkpoints taken with another exclude list \(--exclude '\*\.log'\)/);
    expect(line).toContain("write the new patterns in a .gitignore file in the workspace");
    expect(line).toContain(`forkpoint delete ${id} -u alice --db ${db}`);
    // Nothing changed: the same list (or none) starts as before.
    const again = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice", "--exclude", "*.log"], { XDG_DATA_HOME: data });
    servers.push(again);
    expect(again.output()).not.toContain("just attached");
    write(ws, "out/app.js", "built 2\n");
    const plan = await ok(again.client, "plan_rollback", { checkpoint: "one" });
    expect(plan).toMatchObject({ uncheckpointed: ["out/app.js"], refusal: "WORKSPACE_DRIFT" });

    // The way out it names: the session deleted, the next start attaches anew with the new list.
    await again.close();
    servers.pop();
    const del = spawnSync(process.execPath, [...nodeArgs(MAIN), "delete", id, "-u", "alice", "--db", db], {
      encoding: "utf8",
      env: childEnv(),
    });
    expect(del.status).toBe(0);
    const fresh = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice", "--exclude", "out/"], { XDG_DATA_HOME: data });
    servers.push(fresh);
    expect(fresh.output()).toContain("just attached");
  });
});
