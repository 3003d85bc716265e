// A "conversation" move over a call whose run changed no file judges the files at the paths its arguments name by what
// that run found there (its record), not by a checkpoint or forkpoint's last look: its undo (a mkdir's rm -r) or its
// replay over a file made by hand since is refused, never deletes it unsaved (review ws8: p3 M, p4, p1 E, p5 P2).
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { deleteFileTool, readOrNull, tempDir } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

const mkdir = defineTool<{ path: string }, { had: boolean }>({
  name: "mkdir",
  run: ({ path: at }) => {
    const had = fs.existsSync(at);
    fs.mkdirSync(at, { recursive: true });
    return { had };
  },
  undo: ({ args, result }) => {
    if (!result.had) fs.rmSync(args.path, { recursive: true, force: true });
  },
});
const deleteFile = deleteFileTool();
/** Deletes the files of a folder whose names end in `.tmp`, putting them back on undo. */
const cleanTmp = defineTool<{ dir: string }, { gone: Record<string, string> }>({
  name: "clean_tmp",
  run: ({ dir }) => {
    const gone: Record<string, string> = {};
    for (const name of fs.readdirSync(dir).filter((n) => n.endsWith(".tmp"))) {
      gone[name] = fs.readFileSync(path.join(dir, name), "utf8");
      fs.rmSync(path.join(dir, name));
    }
    return { gone };
  },
  undo: ({ args, result }) => {
    for (const [name, text] of Object.entries(result.gone)) fs.writeFileSync(path.join(args.dir, name), text);
  },
});

async function session(setup?: (ws: string) => void) {
  const ws = tempDir("forkpoint-noop-found-");
  fs.writeFileSync(path.join(ws, "a.txt"), "v0\n");
  setup?.(ws);
  const { fp } = dbs.open({ tools: [mkdir, deleteFile, cleanTmp] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  const branch = (await s.info()).currentBranchId;
  return { s, ws, c0, branch, at: (rel: string) => path.join(ws, rel) };
}

it("the undo of a mkdir that changed no file, over a file made by hand in the folder: refused, the file kept", async () => {
  const { s, c0, at } = await session();
  await s.invoke("mkdir", { path: at("out") }); // an empty folder: no file changed
  fs.writeFileSync(at("out/notes.md"), "MY NOTES\n");
  expect((await s.plan({ checkpointId: c0.id })).drift).toEqual(["out/notes.md"]);
  expect(await rejectionOf(s.rollback(c0.id))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(at("out/notes.md"))).toBe("MY NOTES\n");
});

it("forced, the undo's hand-made file is saved in a checkpoint first", async () => {
  const { s, c0, at } = await session();
  await s.invoke("mkdir", { path: at("out") });
  fs.writeFileSync(at("out/notes.md"), "MY NOTES\n");
  const moved = await s.rollback(c0.id, { force: true });
  expect(moved.savedDrift?.files).toEqual(["out/notes.md"]);
  expect((await s.diffFiles(c0.id, moved.savedDrift!.checkpointId)).patch).toContain("+MY NOTES");
});

it("a file deleted by hand before the call found it missing, made again by hand since: its replay is refused", async () => {
  const { s, c0, branch, at } = await session((ws) => fs.writeFileSync(path.join(ws, "n.txt"), "old\n"));
  fs.rmSync(at("n.txt")); // by hand: the checkpoint and forkpoint's last look still hold it
  await s.invoke("delete_file", { path: at("n.txt") }); // nothing there: no change
  await s.rollback(c0.id);
  fs.writeFileSync(at("n.txt"), "NEW WORK\n");
  expect((await s.plan({ branchId: branch })).drift).toEqual(["n.txt"]);
  expect(await rejectionOf(s.switchBranch(branch))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(await rejectionOf(s.undo())).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(at("n.txt"))).toBe("NEW WORK\n");
});

it("a folder named through a link as the last part of the path reaches the files made in it since", async () => {
  const setup = (ws: string) => {
    fs.mkdirSync(path.join(ws, "d"));
    fs.symlinkSync("d", path.join(ws, "ln"));
  };
  const { s, c0, branch, at } = await session(setup);
  await s.invoke("clean_tmp", { dir: at("ln") }); // nothing to clean
  await s.rollback(c0.id);
  fs.writeFileSync(at("d/draft.tmp"), "MINE\n");
  expect((await s.plan({ branchId: branch })).drift).toEqual(["d/draft.tmp"]);
  expect(await rejectionOf(s.switchBranch(branch))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(at("d/draft.tmp"))).toBe("MINE\n");
});

it("a call naming the workspace itself reaches every file made in it since", async () => {
  const { s, c0, branch, at, ws } = await session();
  await s.invoke("clean_tmp", { dir: ws }); // nothing to clean
  await s.rollback(c0.id);
  fs.writeFileSync(at("draft.tmp"), "MINE\n");
  fs.writeFileSync(at("a.txt"), "edited by hand\n"); // there as the call ran: no drift it weighs
  expect((await s.plan({ branchId: branch })).drift).toEqual(["draft.tmp"]);
  expect(await rejectionOf(s.switchBranch(branch))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(at("draft.tmp"))).toBe("MINE\n");
});
