// A stdio message longer than the SDK's read limit: answered with an error and dropped; the server reads on.
import { spawn } from "node:child_process";
import { afterEach, expect, it } from "vitest";
import { removeDir } from "../helpers.js";
import { childEnv, mcpArgs, mcpRoot } from "./fixture.js";

let root: string | undefined;
afterEach(() => {
  if (root) removeDir(root);
});

it("a message over 10 MiB is refused and the next one answered", async () => {
  const dirs = mcpRoot("forkpoint-mcp-long-line-");
  root = dirs.root;
  const child = spawn(process.execPath, mcpArgs(["--workspace", dirs.ws, "--db", dirs.db, "--user", "alice"]), {
    env: childEnv(),
    stdio: ["pipe", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  let out = "";
  const lines = new Promise<string[]>((resolve) => {
    const got = () => out.split("\n").filter(Boolean);
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      if (got().length >= 2) resolve(got());
    });
    // A server that stops reading (or exits) answers no more: what it said by then.
    child.on("exit", () => resolve(got()));
  });
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "long-line-test", version: "1" } },
  };
  child.stdin.write(`{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"${"x".repeat(11 * 1024 * 1024)}"}}\n`);
  child.stdin.write(`${JSON.stringify(initialize)}\n`);
  const [refusal, answer] = (await lines).map((l) => JSON.parse(l) as Record<string, any>);
  expect(refusal).toMatchObject({ id: null, error: { code: -32600 } });
  expect(refusal!.error.message).toMatch(/^PAYLOAD_TOO_LARGE: /);
  expect(answer).toMatchObject({ id: 1, result: { serverInfo: { name: expect.any(String) } } });
  child.stdin.end();
  expect(await exited).toBe(0);
});
