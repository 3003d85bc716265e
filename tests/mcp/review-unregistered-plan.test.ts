// From the front-end review: plan_rollback must give the refusal rollback gives. A call an application made with a
// tool that has an undo, on a server started without that tool (no --tools), was planned as fine (refusal null), and
// rollback was then refused with TOOL_NOT_REGISTERED and advice for the library (openForkpoint({ tools })); with an
// irreversible call too, the plan said IRREVERSIBLE. Both now say TOOL_NOT_REGISTERED, and how to start the server.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defineTool, openForkpoint } from "../../src/index.js";
import { removeDir } from "../helpers.js";
import { call, connect, filesIn, lineOf, mcpRoot, ok, refused, write, type Connected } from "./fixture.js";

let root: string;
let ws: string;
let db: string;
let server: Connected | undefined;

beforeEach(() => {
  ({ root, ws, db } = mcpRoot("forkpoint-mcp-review-unregistered-"));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

/** A tool with an undo, as the application registers it (the server is started without it). */
const note = defineTool({ name: "note", run: async ({ text }: { text: string }) => text, undo: async () => {} });

/** The server's session, with a call of `note` (unless not `unregistered`) and, with `irreversible`, a recorded call with no undo, after "one". */
async function seeded(irreversible: boolean, unregistered = true) {
  write(ws, "a.txt", "one\n");
  server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"]);
  await ok(server.client, "checkpoint", { name: "one" });
  const sessionId = /session (ses_\S+)/.exec(server.output())![1]!;
  const fp = openForkpoint({ path: db, tools: [note] });
  try {
    const s = await fp.getSession(sessionId, { userId: "alice" });
    if (irreversible) await s.recordToolCall({ tool: "send_email", args: { to: "bob@example.com" }, result: { id: "m1" } });
    if (unregistered) await s.invoke("note", { text: "hello" });
  } finally {
    await fp.close();
  }
  write(ws, "a.txt", "two\n");
  await ok(server.client, "checkpoint", { name: "two" });
  return server.client;
}

describe("a call whose tool this server has not loaded, on the way back", () => {
  it.each([
    ["alone", false],
    ["with an irreversible call", true],
  ])("%s: plan_rollback names TOOL_NOT_REGISTERED, and rollback is refused so, saying to start with --tools", async (_what, irr) => {
    const client = await seeded(irr);
    const plan = await ok(client, "plan_rollback", { checkpoint: "one" });
    expect(plan.refusal).toBe("TOOL_NOT_REGISTERED");
    expect(plan.tools.unregistered).toEqual([expect.stringMatching(/^note tc_/)]);
    expect(lineOf(await call(client, "plan_rollback", { checkpoint: "one" }))).toMatch(/refused \(TOOL_NOT_REGISTERED\).*note.*--tools/);
    const refusal = await refused(client, "rollback", { checkpoint: "one" });
    expect(refusal).toMatch(/^TOOL_NOT_REGISTERED: /);
    expect(refusal).toMatch(/start this MCP server with --tools MODULE/);
    expect(refusal).not.toMatch(/openForkpoint|unregistered: "leave"/);
    // force: true saves no drift here, and changes nothing about the refusal.
    expect(await refused(client, "rollback", { checkpoint: "one", force: true })).toMatch(/^TOOL_NOT_REGISTERED: /);
    expect(filesIn(ws)).toEqual({ "a.txt": "two\n" });
    expect((await ok(client, "branches")).branches).toHaveLength(1);
  });

  it.each([
    ["unregistered", false],
    ["irreversible", true],
  ])("a call %s, and files changed since the last checkpoint: the plan names the refusal rollback gives first", async (_what, irr) => {
    const client = await seeded(irr, !irr);
    write(ws, "a.txt", "changed\n");
    const plan = await ok(client, "plan_rollback", { checkpoint: "one" });
    const refusal = await refused(client, "rollback", { checkpoint: "one" });
    expect(plan.refusal).toBe(irr ? "IRREVERSIBLE" : "TOOL_NOT_REGISTERED");
    expect(refusal.slice(0, refusal.indexOf(":"))).toBe(plan.refusal);
    expect(fs.readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("changed\n");
  });
});
