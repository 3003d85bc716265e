// The committed API reference (docs/api/) is what TypeDoc makes of today's public entries: it fails when the API or its
// doc comments changed without `npm run docs:api`.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repo } from "./code-blocks.js";

describe("the API reference", () => {
  it("is committed, and current: `npm run docs:api` would change nothing", () => {
    expect(existsSync(join(repo, "docs", "api", "README.md"))).toBe(true);
    const check = spawnSync(process.execPath, [join(repo, "scripts", "api-docs.mjs"), "--check"], { cwd: repo, encoding: "utf8" });
    expect(check.stderr + check.stdout).toMatch(/docs\/api is current \(\d+ files\)/);
    expect(check.status).toBe(0);
  }, 180_000);
});
