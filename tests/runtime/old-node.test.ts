// On a Node.js older than 22, npm start / npm test and openForkpoint stop with a message naming the version needed.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ForkpointError } from "../../src/index.js";
import { requireSupportedNode } from "../../src/models/runtime.js";

const root = join(import.meta.dirname, "../..");
/** Debian's Node 20 where the machine has it (better-sqlite3 13 segfaults there when a database opens). */
const OLD_NODE = ["/usr/bin/node", "/usr/local/bin/node"].find((path) => {
  if (!existsSync(path)) return false;
  const v = spawnSync(path, ["-p", "process.versions.node"], { encoding: "utf8" }).stdout.trim();
  return Number(v.split(".")[0]) < 22;
});

describe("the runtime check", () => {
  it("refuses a Node.js older than 22.12 with UNSUPPORTED_RUNTIME naming the version needed", () => {
    expect(() => requireSupportedNode("20.20.2")).toThrow(ForkpointError);
    expect(() => requireSupportedNode("20.20.2")).toThrow(/needs Node\.js 22\.12 or later; this is Node\.js 20\.20\.2/);
    expect(() => requireSupportedNode("22.11.0")).toThrow(/needs Node\.js 22\.12 or later/);
    expect(() => requireSupportedNode("22.12.0")).not.toThrow();
    expect(() => requireSupportedNode("23.0.0")).not.toThrow();
    expect(() => requireSupportedNode("26.12.1")).not.toThrow();
    expect(() => requireSupportedNode()).not.toThrow();
  });

  it.skipIf(OLD_NODE === undefined)("npm's scripts stop at once on an old Node, naming the version", () => {
    const r = spawnSync(OLD_NODE!, [join(root, "scripts/require-node.mjs")], { encoding: "utf8" });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /^forkpoint needs Node\.js 22\.12 or later \(package\.json engines\.node ">=22\.12\.0"\); this is Node\.js 2\d\./,
    );
  });

  it.skipIf(OLD_NODE === undefined)("openForkpoint on an old Node throws UNSUPPORTED_RUNTIME instead of crashing in better-sqlite3", () => {
    const script = `import { openForkpoint } from ${JSON.stringify(join(root, "src/index.ts"))};
try { openForkpoint({ path: ":memory:" }); console.log("opened"); } catch (e) { console.log(e.code, e.message); }`;
    const r = spawnSync(OLD_NODE!, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8", cwd: root });
    expect([r.status, r.signal]).toEqual([0, null]);
    expect(r.stdout).toMatch(/^UNSUPPORTED_RUNTIME forkpoint needs Node\.js 22\.12 or later; this is Node\.js 20\./);
  });
});
