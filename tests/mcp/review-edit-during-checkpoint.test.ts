// Files written while a checkpoint runs (an agent's parallel tool calls, a formatter, a second client) are seen by the
// next checkpoint: the watcher's worker answers a sync once per cookie, though the cookie file makes several events
// (created, closed, removed), each of which once emptied the paths held. The window is a race, so the scenario runs
// several rounds; with that defect one or more of them failed nearly every time.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempDir, removeDir } from "../helpers.js";
import { connect, ok, type Connected } from "./fixture.js";

const FILES = 300;
const ROUNDS = 3;

let root: string;
let server: Connected | undefined;

beforeEach(() => {
  root = makeTempDir("forkpoint-mcp-review-edit-during-");
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

describe("files written while a checkpoint runs", () => {
  it("are in the next checkpoint, as a restart (which walks the tree) finds them", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const ws = path.join(root, `project-${round}`);
      const db = path.join(root, `forkpoint-${round}.db`);
      fs.mkdirSync(path.join(ws, "d"), { recursive: true });
      for (let i = 1; i <= FILES; i++) fs.writeFileSync(path.join(ws, "d", `f${i}`), `old ${i}\n`);
      const args = ["--workspace", ws, "--db", db, "--user", "alice"];
      server = await connect("stdio", args);
      await ok(server.client, "checkpoint", { name: "one" });
      // A second call: the server now follows changes through its watcher.
      await ok(server.client, "diff", { from: "one" });

      let done = false;
      const during = ok(server.client, "checkpoint", { name: "during" }).finally(() => (done = true));
      for (let i = 1; !done && i <= FILES; i++) {
        fs.writeFileSync(path.join(ws, "d", `f${i}`), `new ${i}\n`);
        await new Promise((resolve) => setImmediate(resolve));
      }
      await during;
      const last = (await ok(server.client, "checkpoint", { name: "last" })).checkpoint;
      await server.close();

      server = await connect("stdio", args);
      const missed = await ok(server.client, "diff", { from: last.id });
      expect([...missed.added, ...missed.modified, ...missed.deleted], `round ${round}`).toEqual([]);
      await server.close();
      server = undefined;
    }
    // Six server starts: near the minute on a loaded two-core machine.
  }, 180_000);
});
