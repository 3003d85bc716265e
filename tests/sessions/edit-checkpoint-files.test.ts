// An edit's (and a regenerate's) checkpoint in a session with a workspace captures its files, as checkpoint() does:
// the files as the move left them, which a later rollback to that checkpoint brings back.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Forkpoint, SessionHandle } from "../../src/index.js";
import { dumpOf, openForkpoint, sqlOn } from "../fixtures/backend.js";
import { makeTempDir, removeDir, restoringWriteTool } from "../helpers.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
let db: string;

const write = (rel: string, text: string) => fs.writeFileSync(path.join(ws, rel), text);
const read = (rel: string) => (fs.existsSync(path.join(ws, rel)) ? fs.readFileSync(path.join(ws, rel), "utf8") : null);

beforeEach(() => {
  dir = makeTempDir("forkpoint-edit-ws-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  db = path.join(dir, "forkpoint.db");
  fp = openForkpoint({ path: db, tools: [restoringWriteTool(ws)] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

async function attached(): Promise<SessionHandle> {
  const s = await fp.createSession({ userId: "u" });
  write("notes.txt", "v1\n");
  await s.attachWorkspace(ws);
  return s;
}

describe("an edit's checkpoint and the workspace", () => {
  it("captures the files; a rollback to it brings a file changed since back", async () => {
    const s = await attached();
    const [question] = await s.append([{ role: "user", content: "plan it" }]);
    const edited = await s.edit(question!.id, { content: "plan it better" }, { checkpoint: { name: "edited" } });
    expect(await s.diffFiles(edited.checkpoint!.id, "disk")).toMatchObject({ added: [], modified: [], deleted: [] });

    write("notes.txt", "v2\n");
    write("extra.txt", "new\n");
    await s.checkpoint({ name: "later" }); // the changes are forkpoint's to restore now, not drift
    expect(await s.diffFiles(edited.checkpoint!.id, "disk")).toMatchObject({ added: ["extra.txt"], modified: ["notes.txt"] });

    await s.rollback(edited.checkpoint!.id, { scope: "both" });
    expect(read("notes.txt")).toBe("v1\n");
    expect(read("extra.txt")).toBeNull();
  });

  it("captures the files the move restored (scope both), not the ones it found", async () => {
    const s = await attached();
    await s.append([{ role: "user", content: "draft" }]);
    const before = await s.checkpoint({ name: "before answer" });
    const [answer] = await s.append([{ role: "assistant", content: "first answer" }]);
    write("notes.txt", "answer one\n");
    await s.checkpoint({ name: "answered" });

    const again = await s.regenerate(answer!.id, { content: "second answer" }, { scope: "both", checkpoint: { name: "retry" } });
    expect(read("notes.txt")).toBe("v1\n");
    expect(await s.diffFiles(again.checkpoint!.id, before.id)).toMatchObject({ added: [], modified: [], deleted: [] });

    write("notes.txt", "answer two\n");
    await s.checkpoint();
    await s.rollback(again.checkpoint!.id, { scope: "files" });
    expect(read("notes.txt")).toBe("v1\n");
  });

  it("captures the files after the move's tools were undone", async () => {
    const s = await attached();
    const [m] = await s.append([{ role: "user", content: "write it" }]);
    await s.invoke("write_file", { rel: "notes.txt", text: "the tool wrote this\n" });
    const edited = await s.edit(m!.id, { content: "do not write it" }, { checkpoint: { name: "edited" } });
    expect(edited.undone.map((t) => t.tool)).toEqual(["write_file"]);
    expect(read("notes.txt")).toBe("v1\n");
    expect(await s.diffFiles(edited.checkpoint!.id, "disk")).toMatchObject({ added: [], modified: [], deleted: [] });
  });

  it("a workspace on another host refuses the edit before anything moves, as checkpoint() does", async () => {
    const s = await attached();
    const [m] = await s.append([{ role: "user", content: "hi" }]);
    await sqlOn(db, "UPDATE workspaces SET host = $1", ["app-server-2"]);
    const before = await dumpOf(db);
    await expect(s.edit(m!.id, { content: "hello" }, { checkpoint: { name: "e" } })).rejects.toMatchObject({
      code: "WORKSPACE_ON_OTHER_HOST",
    });
    expect(await dumpOf(db)).toEqual(before);
    // Without a checkpoint the edit records the conversation only, and goes ahead.
    await s.edit(m!.id, { content: "hello" });
  });

  it("a session without a workspace gets a checkpoint without files, as before", async () => {
    const s = await fp.createSession({ userId: "u" });
    const [m] = await s.append([{ role: "user", content: "hi" }]);
    const { checkpoint } = await s.edit(m!.id, { content: "hello" }, { checkpoint: { name: "e" } });
    expect(checkpoint).toMatchObject({ name: "e" });
    await expect(s.diffFiles(checkpoint!.id, "disk")).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
  });
});
