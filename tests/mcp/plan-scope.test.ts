// plan_rollback takes the library plan's scope ("conversation" by default, "files", "both"): its tool lists are those of
// that move, so a client can plan the "both" rollback the server makes; a scope the schema does not know is refused.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openForkpoint, type ForkpointOptions, type ToolDefinition } from "../../src/index.js";
import { freshPgDatabase, pgServer } from "../fixtures/postgres-database.js";
import { removeDir } from "../helpers.js";
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

/** write_file: writes a file, and its undo puts back what was there. */
const writeFile: ToolDefinition<{ path: string; text: string }, { previous: string | null }> = {
  name: "write_file",
  run: ({ path: file, text }) => {
    const previous = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : null;
    fs.writeFileSync(file, text);
    return { previous };
  },
  undo: ({ args, result }) => {
    if (result.previous === null) fs.rmSync(args.path, { force: true });
    else fs.writeFileSync(args.path, result.previous);
  },
};

/** The same tool as a module the server loads with --tools. */
const TOOLS_MODULE = `import fs from "node:fs";
export const writeFile = {
  name: "write_file",
  run: ({ path, text }) => { const previous = fs.existsSync(path) ? fs.readFileSync(path, "utf8") : null; fs.writeFileSync(path, text); return { previous }; },
  undo: ({ args, result }) => { if (result.previous === null) fs.rmSync(args.path, { force: true }); else fs.writeFileSync(args.path, result.previous); },
};
`;

const pg = await pgServer();
const stores: [string, () => Promise<{ args: string[]; open: ForkpointOptions }>][] = [
  ["sqlite", async () => ({ args: ["--db", db], open: { path: db } })],
];
if (pg) stores.push(["postgres", async () => ((url) => ({ args: ["--postgres", url], open: { postgres: url } }))(await freshPgDatabase())]);

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
