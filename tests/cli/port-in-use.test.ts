// `forkpoint ui` and `forkpoint mcp --http` on a port another process listens on: the CLI's own error (CLI_ERROR),
// naming the port and what to do, in text and under --json, as docs/cli.md says of the CLI's errors.
import { mkdirSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installCli, type Installed } from "./binary.js";

let cli: Installed;
let taken: Server;
let port: number;

beforeAll(async () => {
  cli = await installCli();
  mkdirSync(join(cli.dir, "project"));
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
  port = (taken.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((resolve) => taken.close(resolve));
  cli.remove();
});

const commands: [string, () => string[]][] = [
  ["ui", () => ["ui", "--port", String(port)]],
  ["mcp --http", () => ["mcp", "--workspace", join(cli.dir, "project"), "--http", "--port", String(port)]],
];

describe("a port in use", () => {
  it.each(commands)("forkpoint %s: error CLI_ERROR naming the port, in text and under --json", (_, args) => {
    const db = ["--db", join(cli.dir, "fp.db")];
    const env = { XDG_DATA_HOME: join(cli.dir, "data") };
    // The database must exist for `ui`: `mcp` makes it.
    cli.run([...db, "mcp", "--workspace", join(cli.dir, "project")], { env });
    const text = cli.run([...db, ...args()], { env });
    expect([text.status, text.stdout]).toEqual([1, ""]);
    expect(text.stderr).toBe(`error CLI_ERROR: port ${port} of 127.0.0.1 is in use: give another --port, or none for a free one\n`);
    const json = cli.run([...db, "--json", ...args()], { env });
    expect(json.status).toBe(1);
    expect(JSON.parse(json.stdout).error).toEqual({
      code: "CLI_ERROR",
      message: `port ${port} of 127.0.0.1 is in use: give another --port, or none for a free one`,
    });
  });
});
