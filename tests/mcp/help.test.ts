// forkpoint mcp as a verb of the CLI: listed in the program's help, with its own help and examples, as every verb is.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { nodeArgs } from "../fixtures/compiled.js";
import { MAIN, childEnv } from "./fixture.js";

const run = (args: string[]) => spawnSync(process.execPath, [...nodeArgs(MAIN), ...args], { encoding: "utf8", env: childEnv() });

describe("forkpoint mcp --help", () => {
  it("is listed by forkpoint --help, and shows its options and examples", () => {
    expect(run(["--help"]).stdout).toMatch(/^ {2}mcp\b.*MCP client/m);
    const help = run(["mcp", "--help"]);
    expect(help.status).toBe(0);
    for (const option of ["--workspace <dir>", "--user <userId>", "--session <id>", "--exclude <pattern>", "--http", "--port <n>"])
      expect(help.stdout).toContain(option);
    expect(help.stdout).toMatch(/Examples:\n {2}\$ forkpoint mcp --workspace/);
    expect(help.stdout).toContain("docs/mcp.md");
  });

  it("requires --workspace (a usage error, exit 2)", () => {
    const r = run(["mcp"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("--workspace");
  });
});
