// forkpoint mcp --http stopped (SIGTERM) while a rollback runs: the rollback finishes, as it would anyway, and its
// client gets the answer before the server exits; a dropped answer reads as a failed rollback that in fact happened.
import fs from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { removeDir } from "../helpers.js";
import { call, filesIn, httpClient, lineOf, mcpRoot, ok, startHttp, write, type HttpChild } from "./fixture.js";

let root: string | undefined;
let server: HttpChild | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
  if (root) removeDir(root);
});

it("answers a rollback under way when stopped, then exits", async () => {
  const dirs = mcpRoot("forkpoint-mcp-stop-");
  root = dirs.root;
  const N = 2000;
  for (let i = 0; i < N; i++) write(dirs.ws, `f/${i}.txt`, `one ${i}\n`);
  server = await startHttp(["--workspace", dirs.ws, "--db", dirs.db, "--user", "alice"]);
  const client = await httpClient(server.url, server.token);
  await ok(client, "checkpoint", { name: "one" });
  for (let i = 0; i < N; i++) write(dirs.ws, `f/${i}.txt`, `two ${i}\n`);
  await ok(client, "checkpoint", { name: "two" });

  const answer = call(client, "rollback", { checkpoint: "one" }).then(
    (r) => ({ ok: !r.isError, line: lineOf(r) }),
    (error: Error) => ({ ok: false, line: error.message }),
  );
  // Stopped once the rollback has begun writing the files back.
  const first = path.join(dirs.ws, "f");
  while (!fs.readdirSync(first).some((f) => fs.readFileSync(path.join(first, f), "utf8").startsWith("one"))) {
    await new Promise((r) => setTimeout(r, 2));
  }
  const exited = new Promise<number | null>((resolve) => server!.child.once("exit", (code) => resolve(code)));
  server.child.kill("SIGTERM");
  const got = await answer;
  expect(got).toMatchObject({ ok: true, line: expect.stringMatching(/^Rolled back to cp_\w+ "one"/) });
  expect(await exited).toBe(0);
  expect(new Set(Object.values(filesIn(dirs.ws)).map((t) => t.split(" ")[0]))).toEqual(new Set(["one"]));
  await client.close().catch(() => undefined);
});
