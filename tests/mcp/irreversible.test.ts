// A tool call an application recorded on the workspace's session with no undo (an email sent) is never passed by the
// agent: plan_rollback says so, and rollback is refused as a tool error naming IRREVERSIBLE, with nothing moved.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { connect, filesIn, ok, refused, write, type Connected } from "./fixture.js";

let root: string;
let ws: string;
let server: Connected | undefined;

beforeEach(() => {
  root = makeTempDir("forkpoint-mcp-irreversible-");
  ws = path.join(root, "project");
  fs.mkdirSync(ws);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

describe("an irreversible tool call on the way", () => {
  it("is shown by plan_rollback and refuses the rollback (IRREVERSIBLE), leaving files and branches as they were", async () => {
    const db = path.join(root, "fp.db");
    write(ws, "a.txt", "one\n");
    server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"]);
    await ok(server.client, "checkpoint", { name: "one" });
    const sessionId = /session (ses_\S+)/.exec(server.output())![1]!;

    // The application records a call some framework already ran; its tool has no undo.
    const fp = openForkpoint({ path: db });
    const s = await fp.getSession(sessionId, { userId: "alice" });
    const sent = await s.recordToolCall({ tool: "send_email", args: { to: "bob@example.com" }, result: { id: "m1" } });
    await fp.close();

    write(ws, "a.txt", "two\n");
    await ok(server.client, "checkpoint", { name: "two" });
    const plan = await ok(server.client, "plan_rollback", { checkpoint: "one" });
    expect(plan).toMatchObject({
      refusal: "IRREVERSIBLE",
      tools: { undo: [], replay: [], irreversible: [`send_email ${sent.id}`], unregistered: [] },
    });
    const refusal = await refused(server.client, "rollback", { checkpoint: "one" });
    expect(refusal).toMatch(/^IRREVERSIBLE: .*forkpoint CLI: forkpoint rollback --scope both/);
    // No library option the agent cannot see.
    expect(refusal).not.toContain("refuseIrreversible");
    expect(filesIn(ws)).toEqual({ "a.txt": "two\n" });
    expect((await ok(server.client, "branches")).branches).toHaveLength(1);
  });
});
