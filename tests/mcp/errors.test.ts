// What a client sees of the tools (schemas, instructions), and that nothing a client sends crashes the server: bad
// arguments, unknown ids, moves with nothing to move are tool errors naming what was wrong.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempDir, removeDir } from "../helpers.js";
import { TRANSPORTS, call, connect, lineOf, ok, refused, write, type Connected } from "./fixture.js";

let root: string;
let ws: string;
let server: Connected | undefined;

beforeEach(() => {
  root = makeTempDir("forkpoint-mcp-errors-");
  ws = path.join(root, "project");
  fs.mkdirSync(ws);
  write(ws, "a.txt", "one\n");
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

const TOOLS = [
  "checkpoint",
  "list_checkpoints",
  "diff",
  "plan_rollback",
  "rollback",
  "undo",
  "redo",
  "branches",
  "switch_branch",
  "history",
];

describe.each(TRANSPORTS)("over %s", (transport) => {
  it("lists the ten tools, each with an input and an output schema, and instructions for the model", async () => {
    server = await connect(transport, ["--workspace", ws, "--db", path.join(root, "fp.db"), "--user", "alice"]);
    const { tools } = await server.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOLS);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema?.type).toBe("object");
      expect(tool.description).toEqual(expect.any(String));
    }
    const rollback = tools.find((t) => t.name === "rollback")!;
    expect(rollback.inputSchema.required).toEqual(["checkpoint"]);
    expect(Object.keys(rollback.inputSchema.properties ?? {})).toEqual(["checkpoint", "force"]);
    expect(rollback.annotations).toMatchObject({ destructiveHint: true });
    expect(tools.find((t) => t.name === "diff")!.annotations).toMatchObject({ readOnlyHint: true });
    expect(server.client.getServerVersion()).toMatchObject({ name: "forkpoint" });
    expect(server.client.getInstructions()).toContain("plan_rollback first");
  });

  it("answers bad arguments, unknown ids and empty moves with tool errors, and keeps serving", async () => {
    server = await connect(transport, ["--workspace", ws, "--db", path.join(root, "fp.db"), "--user", "alice"]);
    const { client } = server;
    // Arguments the schemas refuse: wrong types, missing fields, unknown keys.
    for (const [name, args] of [
      ["rollback", { checkpoint: 5 }],
      ["rollback", {}],
      ["checkpoint", { nam: "typo" }],
      ["list_checkpoints", { limit: 0 }],
      ["undo", { force: true }],
    ] as const) {
      const r = await call(client, name, args);
      expect(r.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      expect(lineOf(r)).toMatch(/invalid/i);
    }
    expect(await refused(client, "rollback", { checkpoint: "cp_doesnotexist" })).toMatch(/^NOT_FOUND: .*list_checkpoints/);
    expect(await refused(client, "diff", { from: "no such name" })).toMatch(/^NOT_FOUND: /);
    expect(await refused(client, "switch_branch", { branch: "br_nope" })).toMatch(/^NOT_FOUND: /);
    expect(await refused(client, "undo")).toMatch(/^NOTHING_TO_UNDO: /);
    expect(await refused(client, "redo")).toMatch(/^NOTHING_TO_REDO: /);
    expect(await refused(client, "list_checkpoints", { cursor: "not a cursor" })).toMatch(/^VALIDATION_ERROR: /);
    expect((await ok(client, "history")).events).toEqual([]);

    // Still serving, and nothing was written by any of it.
    const cp = await ok(client, "checkpoint");
    expect(cp.checkpoint).toMatchObject({ name: null, position: 1 });
    const r = await call(client, "diff", { from: cp.checkpoint.id });
    expect(lineOf(r)).toBe(`${cp.checkpoint.id} → disk: 0 added, 0 modified, 0 deleted.`);
    expect(r.content).toHaveLength(1);
    expect((await ok(client, "list_checkpoints")).checkpoints).toHaveLength(1);
  });
});
