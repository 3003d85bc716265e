// From the MCP review: a captured file written through another name of it (a hard link, in another folder of the
// workspace or outside it) is changed on disk like any edit; a running server must see it, in diff and in the next
// checkpoint, or a later rewind loses the edit (it is in no checkpoint). A link made from outside once the server
// follows changes makes no event at all: the watcher's stat walk finds it, within its interval (made short here).
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir } from "../helpers.js";
import { connect, ok, write, type Connected, mcpRoot } from "./fixture.js";

let root: string;
let ws: string;
let outside: string;
let db: string;
let server: Connected | undefined;

beforeEach(() => {
  ({ root, ws, outside, db } = mcpRoot("forkpoint-mcp-review-hardlink-"));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

/** Writes src/x.ts with an old mtime: read once by the first checkpoint, then trusted to its stat data. */
function oldFile(): void {
  write(ws, "src/x.ts", "orig\n");
  write(ws, "src/y.ts", "y\n");
  const old = new Date(Date.now() - 3_600_000);
  fs.utimesSync(path.join(ws, "src/x.ts"), old, old);
}

describe("a file written through a hard link", () => {
  it("in another folder of the workspace is seen by diff and captured by the next checkpoint", () =>
    editedThrough(path.join(ws, "other/x-link.ts")));
  it("outside the workspace, made before the server's first scan, is seen by diff and captured by the next checkpoint", () =>
    editedThrough(path.join(outside, "x-link.ts"), true));
  it("outside the workspace, made once the server follows changes, is seen within the stat walk's interval", () =>
    editedThrough(path.join(outside, "x-link.ts")));
});

/** Calls diff until it names src/x.ts (the stat walk found the change), at most `tries` times. */
async function diffUntilSeen(client: Connected["client"], tries = 300): Promise<{ added: string[]; modified: string[] }> {
  for (let i = 0; ; i++) {
    const d = await ok<{ added: string[]; modified: string[] }>(client, "diff", { from: "one" });
    if ([...d.added, ...d.modified].includes("src/x.ts") || i >= tries) return d;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Links src/x.ts at `link` (before the server starts when `early`, else once it follows changes), writes through the
 * link, and checks what is seen.
 */
async function editedThrough(link: string, early = false): Promise<void> {
  oldFile();
  const makeLink = () => {
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.linkSync(path.join(ws, "src/x.ts"), link);
  };
  if (early) makeLink();
  // The stat walk every 50 ms: a link made later is found by it (no event names it).
  server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"], { FORKPOINT_WATCH_WALK_MS: "50" });
  const { client } = server;
  await ok(client, "checkpoint", { name: "one" });
  // A second call: the server now follows changes through its watcher.
  await ok(client, "diff", { from: "one" });

  if (!early) makeLink();
  fs.writeFileSync(link, "edited through the link\n");
  expect(fs.readFileSync(path.join(ws, "src/x.ts"), "utf8")).toBe("edited through the link\n");

  const d = await diffUntilSeen(client);
  expect([...d.added, ...d.modified]).toContain("src/x.ts");

  const two = (await ok(client, "checkpoint", { name: "two" })).checkpoint;
  expect((await ok(client, "diff", { from: "one", to: two.id })).modified).toContain("src/x.ts");

  // What the agent then does: removes the files, and rolls back to "two" to get its work back.
  fs.rmSync(link);
  fs.rmSync(path.join(ws, "src"), { recursive: true });
  await ok(client, "rollback", { checkpoint: two.id, force: true });
  expect(fs.readFileSync(path.join(ws, "src/x.ts"), "utf8")).toBe("edited through the link\n");
}
