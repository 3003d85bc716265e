// plan_rollback on files that differ from the last checkpoint on the branch but that forkpoint wrote (a conversation-only
// rollback left them): it names only the hand edits among them as what the rollback refuses, as the rollback does.
import fs from "node:fs";
import { afterEach, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { removeDir } from "../helpers.js";
import { call, connect, filesIn, lineOf, mcpRoot, ok, write, type Connected } from "./fixture.js";

let server: Connected | undefined;
let root: string | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  if (root) removeDir(root);
});

it("files a move left as another checkpoint has them are no drift; a hand edit among them is, and only it is named so", async () => {
  const dirs = mcpRoot("forkpoint-mcp-saved-");
  root = dirs.root;
  const { ws, db } = dirs;
  write(ws, "a.txt", "one\n");
  write(ws, "b.txt", "b\n");
  server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"]);
  const { client } = server;
  await ok(client, "checkpoint", { name: "one" });
  write(ws, "a.txt", "two\n");
  write(ws, "c.txt", "c\n");
  await ok(client, "checkpoint", { name: "two" });

  // The conversation goes back to "one" (as the web view can do it); the files stay as "two" keeps them.
  const fp = openForkpoint({ path: db });
  try {
    const [info] = (await fp.listSessions({ userId: "alice" })).items;
    const s = await fp.getSession(info!.id, { userId: "alice" });
    const one = (await s.listCheckpoints({ name: "one" })).items[0]!;
    await s.rollback(one.id, { scope: "conversation" });
  } finally {
    await fp.close();
  }
  expect(fs.readFileSync(`${ws}/a.txt`, "utf8")).toBe("two\n");

  const saved = await call(client, "plan_rollback", { checkpoint: "one" });
  expect(saved.structuredContent).toMatchObject({ uncheckpointed: ["a.txt", "c.txt"], refusal: null });
  expect(lineOf(saved)).toContain("a.txt, c.txt are as forkpoint last wrote or saw them");
  expect(lineOf(saved)).not.toMatch(/by hand|WORKSPACE_DRIFT/);

  write(ws, "a.txt", "edited by hand\n");
  const edited = await call(client, "plan_rollback", { checkpoint: "one" });
  expect(edited.structuredContent).toMatchObject({ uncheckpointed: ["a.txt", "c.txt"], refusal: "WORKSPACE_DRIFT" });
  expect(lineOf(edited)).toContain("changed by hand since forkpoint last saw it: a.txt, refused (WORKSPACE_DRIFT)");
  expect(lineOf(edited)).toContain("c.txt is as forkpoint last wrote or saw it");
  // As the rollback: forced, it saves only the hand edit.
  const forced = await ok(client, "rollback", { checkpoint: "one", force: true });
  expect(forced.savedDrift.files).toEqual(["a.txt"]);
  expect(filesIn(ws)).toEqual({ "a.txt": "one\n", "b.txt": "b\n" });
});
