// A PostgreSQL server the CLI cannot reach: one line per message on stderr and exit 1, never a stack trace (the
// library's own error log included, for `forkpoint mcp` as for every other command). The installed binary, real pipes.
import { afterAll, beforeAll, expect, it } from "vitest";
import { installCli, type Installed } from "./binary.js";

// Port 1 on loopback: nothing listens there, so the connection is refused at once.
const NOWHERE = "postgres://nobody@127.0.0.1:1/forkpoint";
let cli: Installed;
beforeAll(async () => {
  cli = await installCli();
});
afterAll(() => cli.remove());

it.each([
  ["mcp", () => ["mcp", "--workspace", cli.dir, "--postgres", NOWHERE]],
  ["sessions", () => ["--postgres", NOWHERE, "sessions", "--user", "alice"]],
])("%s: an unreachable server is one line per message and exit 1, no stack", (_name, args) => {
  const ran = cli.run(args());
  expect(ran.status).toBe(1);
  expect(ran.stderr).toContain("CANNOT_CONNECT");
  expect(ran.stderr).not.toMatch(/\n\s+at /);
  for (const line of ran.stderr.trim().split("\n")) expect(line).toMatch(/^(forkpoint: |error )/);
});
