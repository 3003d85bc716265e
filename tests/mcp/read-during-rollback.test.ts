// Two clients of one forkpoint mcp --http server: one rolls back while the other plans a rollback and diffs the disk.
// No file is edited by hand, so no answer may report files changed since the last checkpoint (a half-rewound tree read
// against the checkpoint the rollback left): each read sees the workspace before the rollback or after it.
import { afterEach, expect, it } from "vitest";
import { removeDir } from "../helpers.js";
import { call, httpClient, lineOf, mcpRoot, ok, startHttp, write, type HttpChild } from "./fixture.js";

let root: string | undefined;
let server: HttpChild | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
  if (root) removeDir(root);
});

it("answers plan_rollback and diff from before a rollback or after it, never halfway", async () => {
  const dirs = mcpRoot("forkpoint-mcp-read-move-");
  root = dirs.root;
  const N = 1500;
  for (let i = 0; i < N; i++) write(dirs.ws, `f/${i}.txt`, `one ${i}\n`);
  server = await startHttp(["--workspace", dirs.ws, "--db", dirs.db, "--user", "alice"]);
  const [a, b] = [await httpClient(server.url, server.token), await httpClient(server.url, server.token)];
  await ok(a, "checkpoint", { name: "one" });
  for (let i = 0; i < N; i++) write(dirs.ws, `f/${i}.txt`, `two ${i}\n`);
  await ok(a, "checkpoint", { name: "two" });

  const seen: string[] = [];
  for (const target of ["one", "two"]) {
    let done = false;
    const reads = (async () => {
      while (!done) {
        const [plan, diff] = await Promise.all([call(b, "plan_rollback", { checkpoint: "one" }), call(b, "diff", { from: "one" })]);
        const p = plan.structuredContent as { restore: string[]; uncheckpointed: string[]; refusal: string | null };
        const d = diff.structuredContent as { modified: string[] };
        // Sent at once, the two may straddle the rollback: each is weighed on its own.
        seen.push(`plan: restore ${p.restore.length}, uncheckpointed ${p.uncheckpointed.length}, refusal ${p.refusal}`);
        seen.push(`diff ${d.modified.length}`);
      }
    })();
    await new Promise((r) => setTimeout(r, 20));
    const moved = await call(a, "rollback", { checkpoint: target });
    done = true;
    await reads;
    expect(lineOf(moved)).toMatch(/^Rolled back/);
  }
  const states = [
    `plan: restore 0, uncheckpointed 0, refusal null`,
    `plan: restore ${N}, uncheckpointed 0, refusal null`,
    `diff 0`,
    `diff ${N}`,
  ];
  expect(seen.filter((s) => !states.includes(s))).toEqual([]);
  await a.close();
  await b.close();
});
