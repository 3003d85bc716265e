// plan_rollback takes the library plan's scope ("conversation" by default, "files", "both"): its tool lists are those of
// that move, so a client can plan the "both" rollback the server makes; a scope the schema does not know is refused.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { removeDir } from "../helpers.js";
import { planStores, TOOLS_MODULE, writeFile } from "./write-file-stores.js";
import { call, connect, filesIn, lineOf, mcpRoot, ok, write, type Connected } from "./fixture.js";

let root: string;
let ws: string;
let db: string;
let server: Connected | undefined;

beforeEach(() => {
  ({ root, ws, db } = mcpRoot("forkpoint-mcp-plan-scope-"));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

const stores = await planStores(() => db);

describe.each(stores)("on %s", (_store, database) => {
  it('plans the tool calls of the scope asked for, and the "both" plan is what rollback does', async () => {
    const { args, open } = await database();
    const tools = path.join(root, "tools.mjs");
    fs.writeFileSync(tools, TOOLS_MODULE);
    write(ws, "a.txt", "one\n");
    server = await connect("stdio", ["--workspace", ws, ...args, "--user", "alice", "--tools", tools]);
    await ok(server.client, "checkpoint", { name: "one" });
    const sessionId = /session (ses_\S+)/.exec(server.output())![1]!;
    // The application writes b.txt through a tool, checkpoints it, then rewinds before it (the call undone).
    const fp = openForkpoint({ ...open, tools: [writeFile] });
    let callId: string;
    try {
      const s = await fp.getSession(sessionId, { userId: "alice" });
      await s.append({ role: "user", content: "write b" });
      await s.invoke("write_file", { path: path.join(ws, "b.txt"), text: "B\n" });
      callId = (await s.plan({ checkpointId: (await s.listCheckpoints({ limit: 1 })).items[0]!.id })).undone[0]!.id;
    } finally {
      await fp.close();
    }
    await ok(server.client, "checkpoint", { name: "two" });
    const call1 = `write_file ${callId}`;

    // Back to "one": the conversation and "both" undo the call, a files-only move runs none.
    const tools1 = async (scope?: string) =>
      (await ok(server!.client, "plan_rollback", { checkpoint: "one", ...(scope ? { scope } : {}) })).tools;
    expect(await tools1()).toEqual({ undo: [call1], replay: [], irreversible: [], unregistered: [] });
    expect((await tools1("conversation")).undo).toEqual([call1]);
    expect((await tools1("both")).undo).toEqual([call1]);
    expect((await tools1("files")).undo).toEqual([]);
    const back = await ok(server.client, "rollback", { checkpoint: "one" });
    expect(back.tools.undone).toEqual([call1]);
    expect(filesIn(ws)).toEqual({ "a.txt": "one\n" });

    // Forward to "two": its files hold the call, so "both" (what rollback does) applies it again without replaying it.
    const plan = async (scope?: string) => ok(server!.client, "plan_rollback", { checkpoint: "two", ...(scope ? { scope } : {}) });
    expect((await plan()).tools.replay).toEqual([call1]);
    const both = await plan("both");
    expect(both.tools).toEqual({ undo: [], replay: [], irreversible: [], unregistered: [] });
    expect(both).toMatchObject({ restore: ["b.txt"], remove: [], refusal: null });
    const done = await ok(server.client, "rollback", { checkpoint: "two" });
    expect(done.tools).toEqual({ undone: both.tools.undo, replayed: both.tools.replay, skipped: [] });
    expect(filesIn(ws)).toEqual({ "a.txt": "one\n", "b.txt": "B\n" });

    // A scope the schema does not know is refused before anything runs.
    const bad = await call(server.client, "plan_rollback", { checkpoint: "one", scope: "everything" });
    expect(bad.isError).toBe(true);
    expect(lineOf(bad)).toMatch(/invalid/i);
  });
});
