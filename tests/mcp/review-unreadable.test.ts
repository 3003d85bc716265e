// From the MCP review: a captured file the server may no longer read (chmod 000), or a folder it may not list in its
// place, is skipped by later checkpoints. A rollback to a checkpoint that had the file must be refused as drift naming
// it (a rewind never writes over what it cannot store), and plan_rollback must say so, not answer INTERNAL: EACCES.
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir } from "../helpers.js";
import { childEnv, mcpArgs, mcpRoot, ok, refused, write } from "./fixture.js";

let root: string;
let ws: string;
let db: string;
let client: Client | undefined;

beforeEach(() => {
  ({ root, ws, db } = mcpRoot("forkpoint-mcp-review-unreadable-"));
});
afterEach(async () => {
  await client?.close();
  client = undefined;
  removeDir(root);
});

/** The server on `ws`, without the capabilities that let root read what it may not (as root, permissions stop no one). */
async function serve(): Promise<Client> {
  const args = mcpArgs(["--workspace", ws, "--db", db, "--user", "alice"]);
  const asRoot = process.getuid?.() === 0;
  const transport = new StdioClientTransport({
    command: asRoot ? "setpriv" : process.execPath,
    args: asRoot ? ["--bounding-set=-dac_override,-dac_read_search", "--", process.execPath, ...args] : args,
    env: childEnv(),
    stderr: "pipe",
  });
  const c = new Client({ name: "forkpoint-tests", version: "1.0.0" });
  await c.connect(transport);
  return c;
}

describe("a captured file the server may no longer read", () => {
  it("refuses the rollback (WORKSPACE_DRIFT), plans it so, and leaves the file as it is", async () => {
    write(ws, "a.txt", "a1\n");
    write(ws, "secret.txt", "s1\n");
    client = await serve();
    await ok(client, "checkpoint", { name: "one" });
    write(ws, "a.txt", "a2\n");
    write(ws, "secret.txt", "s2\n");
    fs.chmodSync(path.join(ws, "secret.txt"), 0o000);
    expect((await ok(client, "checkpoint", { name: "two" })).skipped).toEqual([{ path: "secret.txt", reason: "cannot be read (EACCES)" }]);

    const plan = await ok(client, "plan_rollback", { checkpoint: "one" });
    expect(plan.refusal).toBe("WORKSPACE_DRIFT");
    for (const force of [false, true])
      expect(await refused(client, "rollback", { checkpoint: "one", force })).toMatch(/^WORKSPACE_DRIFT: .*secret\.txt/);
    fs.chmodSync(path.join(ws, "secret.txt"), 0o644);
    expect(fs.readFileSync(path.join(ws, "secret.txt"), "utf8")).toBe("s2\n");
    expect(fs.readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("a2\n");
  });

  it("a folder it may not list where the checkpoint has a file: refused the same way", async () => {
    write(ws, "a.txt", "a1\n");
    write(ws, "secret.txt", "s1\n");
    client = await serve();
    await ok(client, "checkpoint", { name: "one" });
    fs.rmSync(path.join(ws, "secret.txt"));
    write(ws, "secret.txt/key.pem", "key\n");
    fs.chmodSync(path.join(ws, "secret.txt"), 0o000);
    await ok(client, "checkpoint", { name: "two" });
    try {
      expect((await ok(client, "plan_rollback", { checkpoint: "one" })).refusal).toBe("WORKSPACE_DRIFT");
      for (const force of [false, true])
        expect(await refused(client, "rollback", { checkpoint: "one", force })).toMatch(/^WORKSPACE_DRIFT: .*secret\.txt/);
    } finally {
      fs.chmodSync(path.join(ws, "secret.txt"), 0o755);
    }
    expect(fs.readFileSync(path.join(ws, "secret.txt/key.pem"), "utf8")).toBe("key\n");
  });
});
