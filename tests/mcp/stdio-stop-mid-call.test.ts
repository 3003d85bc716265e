// forkpoint mcp over stdio stopped (SIGTERM) while a rollback runs: the rollback finishes, as it would anyway, and its
// client gets the answer before the server exits; a dropped answer reads as a failed rollback that in fact happened.
import fs from "node:fs";
import path from "node:path";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, expect, it } from "vitest";
import { removeDir } from "../helpers.js";
import { call, connect, filesIn, lineOf, mcpRoot, ok, write, type Connected } from "./fixture.js";

let root: string | undefined;
let server: Connected | undefined;
afterEach(async () => {
  await server?.close().catch(() => undefined);
  server = undefined;
  if (root) removeDir(root);
});

it("answers a rollback under way when stopped, then exits", async () => {
  const dirs = mcpRoot("forkpoint-mcp-stdio-stop-");
  root = dirs.root;
  const N = 2000;
  for (let i = 0; i < N; i++) write(dirs.ws, `f/${i}.txt`, `one ${i}\n`);
  server = await connect("stdio", ["--workspace", dirs.ws, "--db", dirs.db, "--user", "alice"]);
  const { client } = server;
  await ok(client, "checkpoint", { name: "one" });
  for (let i = 0; i < N; i++) write(dirs.ws, `f/${i}.txt`, `two ${i}\n`);
  await ok(client, "checkpoint", { name: "two" });

  const pid = (client.transport as StdioClientTransport).pid!;
  const answer = call(client, "rollback", { checkpoint: "one" }).then(
    (r) => ({ ok: !r.isError, line: lineOf(r) }),
    (error: Error) => ({ ok: false, line: error.message }),
  );
  // Stopped once the rollback has begun writing the files back.
  const first = path.join(dirs.ws, "f");
  while (!fs.readdirSync(first).some((f) => fs.readFileSync(path.join(first, f), "utf8").startsWith("one"))) {
    await new Promise((r) => setTimeout(r, 2));
  }
  process.kill(pid, "SIGTERM");
  const got = await answer;
  expect(got).toMatchObject({ ok: true, line: expect.stringMatching(/^Rolled back to cp_\w+ "one"/) });
  expect(new Set(Object.values(filesIn(dirs.ws)).map((t) => t.split(" ")[0]))).toEqual(new Set(["one"]));
});
