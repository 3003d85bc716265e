// From the MCP review: the server's session deleted while it runs (`forkpoint delete`, an operator's cleanup). Its
// tools must say so and what to do (restart the server), not send the model looking for checkpoints that are gone.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { removeDir } from "../helpers.js";
import { connect, mcpRoot, ok, refused, write, type Connected } from "./fixture.js";

let root: string;
let ws: string;
let db: string;
let server: Connected | undefined;

beforeEach(() => {
  ({ root, ws, db } = mcpRoot("forkpoint-mcp-review-deleted-"));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

describe("the server's session deleted while it runs", () => {
  it("is a refusal that says to restart the server, and the restarted server starts a new session", async () => {
    write(ws, "a.txt", "one\n");
    server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"]);
    await ok(server.client, "checkpoint", { name: "one" });
    const fp = openForkpoint({ path: db });
    try {
      const [session] = (await fp.listSessions({ userId: "alice" })).items;
      await fp.deleteSession(session!.id, { userId: "alice" });
    } finally {
      await fp.close();
    }
    for (const tool of ["checkpoint", "undo", "branches", "list_checkpoints"])
      expect(await refused(server.client, tool)).toMatch(/^NOT_FOUND: session not found: .*restart this MCP server/);
    await server.close();

    server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice"]);
    expect((await ok(server.client, "list_checkpoints")).checkpoints).toEqual([]);
    await ok(server.client, "checkpoint", { name: "again" });
  });
});
