// From the MCP review: a person rolling an MCP session back with the CLI (the way docs/mcp.md gives past an IRREVERSIBLE
// refusal) moves the conversation alone unless `--scope both`: rollback, switch, undo and redo say the files stayed.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { runInProcess } from "./in-process.js";

let dir = "";
let db = "";
let ws = "";
const ids = { session: "", plain: "", one: "", plainCp: "" };

beforeAll(async () => {
  dir = makeTempDir("forkpoint-cli-workspace-left-");
  db = path.join(dir, "cli.db");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, "a.txt"), "one\n");
  const fp = openForkpoint({ path: db });
  const s = await fp.createSession({ userId: "ann" });
  await s.attachWorkspace(ws);
  ids.one = (await s.checkpoint({ name: "one" })).id;
  fs.writeFileSync(path.join(ws, "a.txt"), "two\n");
  await s.checkpoint({ name: "two" });
  ids.session = s.id;
  const plain = await fp.createSession({ userId: "ann" });
  ids.plainCp = (await plain.checkpoint({ name: "start" })).id;
  await plain.append([{ role: "user", content: "hi" }]);
  ids.plain = plain.id;
  await fp.close();
});
afterAll(() => removeDir(dir));

const cli = (...args: string[]) => runInProcess(["--db", db, ...args, "-u", "ann"]);
const NOTE = /^workspace +.* left as it is: --scope both moves its files with the conversation$/m;

it("a rollback, its dry run and its plan without --scope say the workspace's files stay as they are", async () => {
  for (const run of [
    await cli("plan", ids.session, "-c", ids.one),
    await cli("rollback", ids.session, ids.one, "--dry-run"),
    await cli("rollback", ids.session, ids.one),
  ]) {
    expect(run).toMatchObject({ status: 0, stderr: "" });
    expect(run.stdout).toMatch(NOTE);
    expect(run.stdout).toContain(fs.realpathSync(ws));
  }
  expect(fs.readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("two\n");
});

it("with --scope both the files move and nothing is noted; a session without a workspace notes nothing", async () => {
  const both = await cli("rollback", ids.session, ids.one, "--scope", "both");
  expect(both).toMatchObject({ status: 0, stderr: "" });
  expect(both.stdout).not.toMatch(NOTE);
  expect(fs.readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("one\n");
  const plain = await cli("rollback", ids.plain, ids.plainCp);
  expect(plain).toMatchObject({ status: 0, stderr: "" });
  expect(plain.stdout).not.toContain("workspace");
});

it("undo and redo of the conversation alone say it too", async () => {
  for (const run of [await cli("undo", ids.session), await cli("redo", ids.session)]) {
    expect(run).toMatchObject({ status: 0, stderr: "" });
    expect(run.stdout).toMatch(NOTE);
  }
  const both = await cli("undo", ids.session, "--scope", "both");
  expect(both).toMatchObject({ status: 0, stderr: "" });
  expect(both.stdout).not.toMatch(NOTE);
});
