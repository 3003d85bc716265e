// From the MCP review: two servers on one workspace (two clients), one killed in the middle of a rollback. The one
// still running must finish (or take back) the interrupted restore: refusing every checkpoint and move with
// MOVE_IN_PROGRESS ("try again in a moment") until it is restarted leaves the agent unable to save its work, in a tree
// half of one version and half of the other, strewn with staged files.
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir } from "../helpers.js";
import { call, childEnv, connect, lineOf, mcpArgs, ok, type Connected, mcpRoot } from "./fixture.js";

const FILES = 2000;

let root: string;
let ws: string;
let db: string;
let survivor: Connected | undefined;
let doomed: Client | undefined;

beforeEach(() => {
  ({ root, ws, db } = mcpRoot("forkpoint-mcp-review-survivor-"));
});
afterEach(async () => {
  await doomed?.close().catch(() => undefined);
  await survivor?.close();
  doomed = survivor = undefined;
  removeDir(root);
});

const fileAt = (i: number) => path.join(ws, `d${i % 40}`, `f${i}.txt`);

function writeAll(version: string): void {
  for (let i = 0; i < FILES; i++) {
    fs.mkdirSync(path.dirname(fileAt(i)), { recursive: true });
    fs.writeFileSync(fileAt(i), `${version} ${i} ${"x".repeat(8000)}\n`);
  }
}

const versionsOnDisk = () => {
  const counts: Record<string, number> = {};
  for (let i = 0; i < FILES; i++) {
    // A killed rewind may leave a file moved aside (absent) until recovery puts it back.
    const v = fs.existsSync(fileAt(i)) ? fs.readFileSync(fileAt(i), "utf8").split(" ")[0]! : "(absent)";
    counts[v] = (counts[v] ?? 0) + 1;
  }
  return counts;
};

const staged = (dir: string): string[] =>
  fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((p) => /\.forkpoint-\d+/.test(p));

/** Starts a rollback of `client` (a server of process `pid`) to `checkpointId` and kills it once it renames files into place. */
async function killMidRollback(client: Client, pid: number, checkpointId: string): Promise<void> {
  const exited = new Promise<void>((resolve) => {
    const poll = () => {
      try {
        process.kill(pid, 0);
        setTimeout(poll, 20);
      } catch {
        resolve();
      }
    };
    poll();
  });
  void call(client, "rollback", { checkpoint: checkpointId }).catch(() => undefined);
  // Polled without yielding: the kill lands within the rename phase. A file being replaced is briefly absent (moved
  // aside, then the restored one linked in): that read is polled again.
  const current = () => {
    try {
      return fs.readFileSync(fileAt(0), "utf8");
    } catch {
      return "";
    }
  };
  while (!current().startsWith("v1")) {
    // busy
  }
  process.kill(pid, "SIGKILL");
  await exited;
}

/**
 * Two servers on one workspace at v2 (checkpoints v1, v2); the doomed one killed once its rollback to v1 has started
 * renaming files into place (its journal is in the database). The survivor keeps serving.
 */
async function twoServersOneKilledMidRollback(): Promise<void> {
  writeAll("v1");
  const args = ["--workspace", ws, "--db", db, "--user", "alice"];
  const transport = new StdioClientTransport({ command: process.execPath, args: mcpArgs(args), env: childEnv(), stderr: "pipe" });
  doomed = new Client({ name: "forkpoint-tests", version: "1.0.0" });
  await doomed.connect(transport);
  survivor = await connect("stdio", args);
  const v1 = (await ok(doomed, "checkpoint", { name: "v1" })).checkpoint;
  writeAll("v2");
  await ok(doomed, "checkpoint", { name: "v2" });
  await ok(survivor.client, "list_checkpoints");
  await killMidRollback(doomed, transport.pid!, v1.id);
}

describe("a server killed mid-rollback while another serves the same workspace", () => {
  it("the one still running finishes or takes back the restore, and then checkpoints", async () => {
    await twoServersOneKilledMidRollback();
    const atKill = versionsOnDisk();
    expect(atKill.v2, "killed before the restore ended").toBeGreaterThan(0);

    // Its process is gone: nothing is "in progress" any more.
    const r = await call(survivor!.client, "checkpoint", { name: "after the crash" });
    expect(r.isError ? lineOf(r) : "saved").toBe("saved");
    const counts = versionsOnDisk();
    expect(Object.keys(counts)).toHaveLength(1);
    expect(staged(ws)).toEqual([]);
  });

  it("the plan of the next rollback is made from where the interrupted one is finished, as that rollback is", async () => {
    await twoServersOneKilledMidRollback();

    const plan = await ok(survivor!.client, "plan_rollback", { checkpoint: "v2" });
    const moved = await ok(survivor!.client, "rollback", { checkpoint: "v2" });
    expect(plan.refusal).toBeNull();
    expect(plan.restore).toEqual(moved.files.written);
    expect(versionsOnDisk()).toEqual({ v2: FILES });
  });
});
