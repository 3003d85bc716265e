// A hand edit an undo puts back as a file where the target has a folder, its path also kept for an irreversible call:
// the "both" rollback is refused forced or not, nothing changed, and plan() says so in `blocked`.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { readOrNull, tempDir } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

it("a put-back file kept for an irreversible call where the target has a folder: plan says blocked", async () => {
  const ws = tempDir("forkpoint-kept-over-folder-");
  const at = (p: string) => path.join(ws, p);
  /** What a path holds: its text, "<dir>", or null. */
  const read = (p: string) => (fs.existsSync(at(p)) && fs.statSync(at(p)).isDirectory() ? "<dir>" : readOrNull(at(p)));
  const toFolder = defineTool<{ p: string }, { previous: string | null }>({
    name: "to_folder",
    run: ({ p }) => {
      const previous = read(p);
      fs.rmSync(at(p), { recursive: true, force: true });
      fs.mkdirSync(at(p));
      fs.writeFileSync(at(`${p}/inner.txt`), "inner");
      return { previous };
    },
    undo: ({ args, result }) => {
      fs.rmSync(at(args.p), { recursive: true, force: true });
      if (result.previous !== null) fs.writeFileSync(at(args.p), result.previous);
    },
  });
  const rename = defineTool<{ from: string; to: string }, { from: string | null; to: string | null }>({
    name: "rename_file",
    run: ({ from, to }) => {
      const was = { from: readOrNull(at(from)), to: readOrNull(at(to)) };
      fs.renameSync(at(from), at(to));
      return was;
    },
    undo: ({ args, result }) => {
      fs.rmSync(at(args.to), { force: true });
      if (result.to !== null) fs.writeFileSync(at(args.to), result.to);
      if (result.from !== null) fs.writeFileSync(at(args.from), result.from);
    },
  });
  const writeNoUndo = defineTool<{ p: string; text: string }, null>({
    name: "write_noundo",
    run: ({ p, text }) => (fs.writeFileSync(at(p), text), null),
  });
  fs.writeFileSync(at("d"), "d0");
  const { fp } = dbs.open({ tools: [toFolder, rename, writeNoUndo] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.invoke("to_folder", { p: "d" });
  const folder = await s.checkpoint({ name: "folder" });
  // d made a file by hand (kept in no checkpoint), then written over by a rename whose undo puts it back, then by a
  // call without an undo, whose effect the rollback keeps.
  fs.rmSync(at("d"), { recursive: true });
  fs.writeFileSync(at("d"), "by hand");
  fs.writeFileSync(at("a.txt"), "a");
  await s.checkpoint({ name: "a" });
  fs.appendFileSync(at("d"), ", again");
  await s.invoke("rename_file", { from: "a.txt", to: "d" });
  await s.invoke("write_noundo", { p: "d", text: "no undo" });

  const planned = await s.plan({ checkpointId: folder.id, scope: "both" });
  expect(planned.blocked).toContain("d is a file where d/inner.txt needs a directory");
  for (const force of [false, true]) {
    const refused = await rejectionOf(s.rollback(folder.id, { scope: "both", force }));
    expect(refused).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(read("d")).toBe("no undo");
  }
});
