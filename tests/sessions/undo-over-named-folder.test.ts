// An undo that deletes the folder its call made, where a file kept in a checkpoint now stands: the change at that path
// (named by the call's arguments, above the file its run wrote) is the undo's own doing, so the move goes on, as planned.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { readOrNull, tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

for (const force of [false, true])
  it(`a "both" switch whose undo deletes a checkpointed file over its call's folder goes on (force ${force})`, async () => {
    const ws = tempDir("forkpoint-undo-named-folder-");
    const at = (p: string) => path.join(ws, p);
    const read = (p: string) => (fs.existsSync(at(p)) && fs.statSync(at(p)).isDirectory() ? "<dir>" : readOrNull(at(p)));
    const put = (p: string, text: string | null) => {
      fs.rmSync(at(p), { recursive: true, force: true });
      if (text === null) return;
      fs.mkdirSync(path.dirname(at(p)), { recursive: true });
      fs.writeFileSync(at(p), text);
    };
    const write = defineTool<{ p: string; text: string }, { previous: string | null }>({
      name: "write_file",
      run: ({ p, text }) => {
        const previous = read(p);
        put(p, text);
        return { previous };
      },
      undo: ({ args, result }) => put(args.p, result.previous),
    });
    const toFolder = defineTool<{ p: string }, { previous: string | null }>({
      name: "to_folder",
      run: ({ p }) => {
        const previous = read(p);
        put(p, null);
        fs.mkdirSync(at(p), { recursive: true });
        fs.writeFileSync(at(`${p}/inner.txt`), "inner");
        return { previous };
      },
      undo: ({ args, result }) => put(args.p, result.previous),
    });
    fs.writeFileSync(at("a.txt"), "a0");
    const { fp } = dbs.open({ tools: [write, toFolder] });
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const start = await s.checkpoint({ name: "start" });
    await s.invoke("write_file", { p: "sub/e.txt", text: "X" });
    await s.checkpoint({ name: "X" });
    await s.invoke("write_file", { p: "sub/e.txt", text: "Y" });
    const main = (await s.info()).currentBranchId;
    await s.rollback(start.id, { scope: "both" });
    // Its run found nothing at sub/e.txt and wrote sub/e.txt/inner.txt; its undo deletes whatever stands at sub/e.txt.
    await s.invoke("to_folder", { p: "sub/e.txt" });
    put("sub/e.txt", "by hand");
    await s.checkpoint({ name: "by hand" });

    const planned = await s.plan({ branchId: main, scope: "both" });
    expect([planned.drift, planned.blocked, planned.mayStop]).toEqual([[], undefined, undefined]);
    const moved = await s.switchBranch(main, { scope: "both", force });
    expect([moved.undone.map((t) => t.tool), moved.replayed.map((t) => t.tool)]).toEqual([["to_folder"], ["write_file"]]);
    expect([read("sub/e.txt"), read("a.txt")]).toEqual(["Y", "a0"]);
    expect((await fp.verify()).ok).toBe(true);
  });
