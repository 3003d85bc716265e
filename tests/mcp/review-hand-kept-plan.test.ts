// plan_rollback must say what rollback does with a hand edit one of its undos puts back: the "both" move leaves it as
// it is (files.kept), yet the plan listed it under `restore`, from the files and the irreversible calls alone.
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
  ({ root, ws, db } = mcpRoot("forkpoint-mcp-review-hand-kept-"));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

const stores = await planStores(() => db);

describe.each(stores)("on %s", (_store, database) => {
  it("a hand edit an undo puts back is planned as kept, as rollback keeps it", async () => {
    const { args, open } = await database();
    const tools = path.join(root, "tools.mjs");
    fs.writeFileSync(tools, TOOLS_MODULE);
    write(ws, "a.txt", "v0\n");
    server = await connect("stdio", ["--workspace", ws, ...args, "--user", "alice", "--tools", tools]);
    await ok(server.client, "checkpoint", { name: "one" });
    const sessionId = /session (ses_\S+)/.exec(server.output())![1]!;
    // A save by hand, then a call over it: the call's undo puts the hand edit back, which the rewind keeps.
    const fp = openForkpoint({ ...open, tools: [writeFile] });
    try {
      const s = await fp.getSession(sessionId, { userId: "alice" });
      await s.append({ role: "user", content: "write a" });
      write(ws, "a.txt", "HAND\n");
      await s.invoke("write_file", { path: path.join(ws, "a.txt"), text: "A1\n" });
    } finally {
      await fp.close();
    }
    for (const scope of [undefined, "both"]) {
      const args = { checkpoint: "one", ...(scope ? { scope } : {}) };
      const plan = await ok(server.client, "plan_rollback", args);
      expect(plan).toMatchObject({ restore: [], remove: [], kept: ["a.txt"], refusal: "WORKSPACE_DRIFT" });
      const line = lineOf(await call(server.client, "plan_rollback", args));
      expect(line).toMatch(
        /write back 0 files and delete 0; keep 1 file as it is \(a\.txt\): its undos put back changes made there by hand/,
      );
    }
    const done = await call(server.client, "rollback", { checkpoint: "one", force: true });
    expect((done.structuredContent as { files: unknown }).files).toEqual({ written: [], deleted: [], kept: ["a.txt"] });
    expect(lineOf(done)).toContain("a.txt kept as they are now, not as the checkpoint has them (changed by hand, or put back by an undo;");
    expect(filesIn(ws)).toEqual({ "a.txt": "HAND\n" });
  });
});
