// A long text file rewritten line by line makes a unified diff slow to compute (it grows with the square of the changed
// lines): diff and plan_rollback compare files off the server's thread, so that other clients are answered and a stop
// is obeyed meanwhile, and a comparison past --diff-timeout is given up (DIFF_TIMEOUT) with the server still serving.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempDir, removeDir } from "../helpers.js";
import { call, childEnv, connect, httpClient, mcpArgs, ok, refused, startHttp, write, type Connected, type HttpChild } from "./fixture.js";

let root: string;
let ws: string;
let db: string;
let http: HttpChild | undefined;
let server: Connected | undefined;

beforeEach(() => {
  root = makeTempDir("forkpoint-mcp-large-diff-");
  ws = path.join(root, "project");
  db = path.join(root, "forkpoint.db");
  fs.mkdirSync(ws);
});
afterEach(async () => {
  await server?.close();
  await http?.stop();
  server = undefined;
  http = undefined;
  removeDir(root);
});

/** A file of `n` lines; `rewritten`: every other line changed (seconds of work for a unified diff of 4,000 lines). */
const longFile = (n: number, rewritten: boolean) =>
  Array.from({ length: n }, (_, i) => `line ${i + 1}${rewritten && i % 2 === 1 ? " changed" : ""} with some text on it\n`).join("");

describe("comparing a long, much-changed file", () => {
  it("leaves the server answering other clients meanwhile, and stopping when told to", async () => {
    write(ws, "big.txt", longFile(4000, false));
    write(ws, "a.txt", "a\n");
    http = await startHttp(["--workspace", ws, "--db", db, "--user", "alice"]);
    const a = await httpClient(http.url, http.token);
    const b = await httpClient(http.url, http.token);
    try {
      await ok(a, "checkpoint", { name: "c0" });
      write(ws, "big.txt", longFile(4000, true));
      let settled = false;
      const comparing = call(a, "diff", { from: "c0" }).then(
        () => "answered",
        () => "cut off",
      );
      void comparing.finally(() => (settled = true));
      await sleep(300); // the comparison under way on the server
      expect((await ok(b, "list_checkpoints")).checkpoints).toHaveLength(1);
      expect(settled).toBe(false);
      // SIGTERM is obeyed at once: the comparison is abandoned, its client cut off.
      await http.stop();
      http = undefined;
      expect(await comparing).toBe("cut off");
    } finally {
      await a.close().catch(() => undefined);
      await b.close().catch(() => undefined);
    }
  });

  it("gives up past --diff-timeout with DIFF_TIMEOUT, and the server keeps serving", async () => {
    write(ws, "big.txt", longFile(400, false));
    server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice", "--diff-timeout", "1ms"]);
    const { client } = server;
    const c0 = (await ok(client, "checkpoint", { name: "c0" })).checkpoint;
    write(ws, "big.txt", longFile(400, true));
    await ok(client, "checkpoint", { name: "c1" });
    expect(await refused(client, "diff", { from: "c0" })).toMatch(
      /^DIFF_TIMEOUT: comparing the files took longer than 1 ms, so it was stopped .*diff between/,
    );
    expect(await refused(client, "plan_rollback", { checkpoint: "c0" })).toMatch(/^DIFF_TIMEOUT: .*rollback itself refuses/);
    // Everything else still works, the rollback itself included.
    expect((await ok(client, "list_checkpoints")).checkpoints).toHaveLength(2);
    await ok(client, "rollback", { checkpoint: c0.id });
    expect(fs.readFileSync(path.join(ws, "big.txt"), "utf8")).toBe(longFile(400, false));
    expect(await refused(client, "diff", { from: "c0", to: "c1" })).toMatch(/^DIFF_TIMEOUT: /);
  });

  it("refuses a --diff-timeout that is not a duration, or over an hour (a usage error)", () => {
    for (const bad of ["soon", "0", "2h"]) {
      const r = spawnSync(process.execPath, mcpArgs(["--workspace", ws, "--db", db, "--diff-timeout", bad]), {
        encoding: "utf8",
        env: childEnv(),
        input: "",
      });
      expect([r.status, r.stderr]).toEqual([2, expect.stringContaining("--diff-timeout")]);
    }
    expect(fs.existsSync(db)).toBe(false);
  });
});
