// The start lock: calls finding or creating a directory's session run one after the other, so that they all take the
// same one; a lock its owner died holding is taken over, and never one a live owner holds.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openForkpoint, type Forkpoint } from "../../src/index.js";
import { lockPath, withStartLock } from "../../src/mcp/start-lock.js";
import { workspaceSession } from "../../src/mcp/workspace-session.js";
import { makeTempDir, removeDir } from "../helpers.js";

let root: string;
let locks: string;
let fp: Forkpoint | undefined;

beforeEach(() => {
  root = makeTempDir("forkpoint-mcp-lock-");
  locks = path.join(root, "locks");
});
afterEach(async () => {
  await fp?.close();
  fp = undefined;
  removeDir(root);
});

/** A pid no process has: one that just exited. */
const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid!;

describe("withStartLock", () => {
  it("runs the holders of one key one after the other, and removes its file after", async () => {
    const order: string[] = [];
    const holder = (name: string) =>
      withStartLock(locks, "/some/dir", async () => {
        order.push(`${name} in`);
        await new Promise((r) => setImmediate(r));
        order.push(`${name} out`);
        return name;
      });
    expect(await Promise.all([holder("a"), holder("b"), holder("c")])).toEqual(["a", "b", "c"]);
    expect(order).toEqual(["a in", "a out", "b in", "b out", "c in", "c out"]);
    expect(fs.readdirSync(locks)).toEqual([]);
    // Another key is another lock.
    await withStartLock(locks, "/some/dir", () => withStartLock(locks, "/another/dir", async () => undefined));
  });

  it("takes over a lock its owner died holding, but waits for a live one", async () => {
    fs.mkdirSync(locks, { recursive: true });
    const file = lockPath(locks, "/some/dir");
    fs.writeFileSync(file, JSON.stringify({ pid: deadPid(), host: hostname(), token: "dead" }));
    expect(await withStartLock(locks, "/some/dir", async () => "taken over")).toBe("taken over");
    expect(fs.existsSync(file)).toBe(false);

    // A live owner (this process's parent stands for one): waited for until it lets go.
    fs.writeFileSync(file, JSON.stringify({ pid: process.ppid, host: hostname(), token: "live" }));
    let done = false;
    const waiting = withStartLock(locks, "/some/dir", async () => (done = true), { pollMs: 5 });
    await new Promise((r) => setTimeout(r, 50));
    expect(done).toBe(false);
    fs.rmSync(file);
    await waiting;
    expect(done).toBe(true);
  });
});

describe("workspaceSession", () => {
  it("gives calls made at once on a new directory the same session", async () => {
    const dir = path.join(root, "project");
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "a.txt"), "a\n");
    fp = openForkpoint({ path: path.join(root, "fp.db") });
    const found = await Promise.all(
      [0, 1, 2].map(() => workspaceSession(fp!, { dir, userId: "alice", lockDir: locks }).then((ws) => ws.session.id)),
    );
    expect(new Set(found).size).toBe(1);
    expect((await fp.listSessions({ userId: "alice" })).items.map((s) => s.id)).toEqual([found[0]]);
  });
});
