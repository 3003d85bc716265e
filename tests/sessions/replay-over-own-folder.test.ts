// A move's replay that writes a file over a folder an earlier replay of the same move made: what goes away under that
// path is the move's own doing, not a change made while it ran, so the move goes on (as its plan says).
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { readOrNull, tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

for (const force of [false, true])
  it(`a replayed rename over the folder a replayed call made goes on (conversation, force ${force})`, async () => {
    const ws = tempDir("forkpoint-replay-own-folder-");
    const at = (p: string) => path.join(ws, p);
    const read = (p: string) => (fs.existsSync(at(p)) && fs.statSync(at(p)).isDirectory() ? "<dir>" : readOrNull(at(p)));
    const put = (p: string, text: string | null) => {
      fs.rmSync(at(p), { recursive: true, force: true });
      if (text !== null) fs.writeFileSync(at(p), text);
    };
    const toFolder = defineTool<{ p: string }, { previous: string | null }>({
      name: "to_folder",
      run: ({ p }) => {
        const previous = read(p);
        put(p, null);
        fs.mkdirSync(at(p));
        fs.writeFileSync(at(`${p}/inner.txt`), "inner");
        return { previous };
      },
      undo: ({ args, result }) => put(args.p, result.previous),
    });
    const rename = defineTool<{ from: string; to: string }, { from: string | null; to: string | null }>({
      name: "rename_file",
      run: ({ from, to }) => {
        const was = { from: read(from), to: read(to) };
        put(to, was.from);
        put(from, null);
        return was;
      },
      undo: ({ args, result }) => {
        put(args.to, result.to);
        put(args.from, result.from);
      },
    });
    fs.writeFileSync(at("b.txt"), "b0");
    fs.writeFileSync(at("c.txt"), "c0");
    const { fp } = dbs.open({ tools: [toFolder, rename] });
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const start = await s.checkpoint({ name: "start" });
    await s.invoke("to_folder", { p: "b.txt" });
    // By hand, the folder made a file again, kept in a checkpoint: the rename then wrote over a file.
    put("b.txt", "by hand");
    await s.checkpoint({ name: "by hand" });
    await s.invoke("rename_file", { from: "c.txt", to: "b.txt" });
    await s.invoke("to_folder", { p: "b.txt" });
    const end = await s.checkpoint({ name: "end" });
    await s.rollback(start.id, { scope: "conversation", force: true });

    const planned = await s.plan({ checkpointId: end.id, scope: "conversation" });
    expect(planned.blocked).toBeUndefined();
    expect(planned.mayStop).toBeUndefined();
    const moved = await s.rollback(end.id, { scope: "conversation", force });
    expect(moved.replayed.map((t) => t.tool)).toEqual(["to_folder", "rename_file", "to_folder"]);
    expect([read("b.txt"), read("b.txt/inner.txt"), read("c.txt")]).toEqual(["<dir>", "inner", null]);
  });
