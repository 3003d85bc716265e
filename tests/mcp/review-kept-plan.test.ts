// plan_rollback must say what rollback does with a file a "both" rewind keeps: that of an irreversible call the
// application's own rewind left applied (see docs/tools-and-undo.md). A second rewind to the same checkpoint passes no
// call (so no IRREVERSIBLE refusal) and keeps the file, yet the plan listed it under `remove`, from the files alone.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { openForkpoint, type ToolDefinition } from "../../src/index.js";
import { removeDir } from "../helpers.js";
import { call, connect, filesIn, lineOf, mcpRoot, ok, write, type Connected } from "./fixture.js";

let root: string;
let ws: string;
let db: string;
let server: Connected | undefined;

beforeEach(() => {
  ({ root, ws, db } = mcpRoot("forkpoint-mcp-review-kept-"));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

/** note_line: appends a line to a file, with no undo (a message sent is sent). */
const noteLine: ToolDefinition<{ path: string; line: string }, null> = {
  name: "note_line",
  run: ({ path: file, line }) => {
    fs.appendFileSync(file, `${line}\n`);
    return null;
  },
};

it("a file a rewind keeps is not planned for deletion, and rollback keeps it", async () => {
  const tools = path.join(root, "tools.mjs");
  fs.writeFileSync(
    tools,
    `import { appendFileSync } from "node:fs";\nexport const noteLine = { name: "note_line", run: ({ path, line }) => { appendFileSync(path, line + "\\n"); return null; } };\n`,
  );
  write(ws, "a.txt", "one\n");
  server = await connect("stdio", ["--workspace", ws, "--db", db, "--user", "alice", "--tools", tools]);
  await ok(server.client, "checkpoint", { name: "one" });
  const sessionId = /session (ses_\S+)/.exec(server.output())![1]!;
  const notes = path.join(ws, "notes.txt");
  // The application sends the note, then rewinds past it: the call stays applied, and its file stays.
  const fp = openForkpoint({ path: db, tools: [noteLine] });
  try {
    const s = await fp.getSession(sessionId, { userId: "alice" });
    await s.append({ role: "user", content: "send it" });
    await s.invoke("note_line", { path: notes, line: "sent" });
    const back = await s.listCheckpoints({ limit: 10 });
    const one = back.items.find((c) => c.name === "one")!;
    const moved = await s.rollback(one.id, { scope: "both" });
    expect(moved.files?.kept).toEqual(["notes.txt"]);
  } finally {
    await fp.close();
  }
  expect(filesIn(ws)).toEqual({ "a.txt": "one\n", "notes.txt": "sent\n" });
  const plan = await ok(server.client, "plan_rollback", { checkpoint: "one" });
  const line = lineOf(await call(server.client, "plan_rollback", { checkpoint: "one" }));
  const done = await ok(server.client, "rollback", { checkpoint: "one" });
  expect(done.files.kept).toEqual(["notes.txt"]);
  expect(filesIn(ws)).toEqual({ "a.txt": "one\n", "notes.txt": "sent\n" });
  expect(plan.refusal).toBe(null);
  expect(plan.remove).toEqual([]);
  expect(plan.restore).toEqual([]);
  expect(plan.kept).toEqual(["notes.txt"]);
  expect(line).not.toMatch(/delete 1/);
  expect(line).toMatch(/write back 0 files and delete 0; keep 1 file as it is \(notes\.txt\): irreversible/);
});
