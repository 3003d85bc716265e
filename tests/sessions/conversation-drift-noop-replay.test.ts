// A "conversation" move replaying a call whose run changed no file (a delete of a missing file): the paths its arguments
// name are where it writes when run again, so a file made there by hand since is drift (refused, or saved first when
// forced), never deleted unsaved; drift elsewhere, or in a file that was there as the call ran, does not refuse it
// (review ws6, p18, r17).
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { readOrNull, tempDir } from "../fixtures/file-tools.js";
import { dumpOf } from "../fixtures/backend.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

const deleteFile = defineTool<{ path: string }, { previous: string | null }>({
  name: "delete_file",
  run: ({ path: at }) => {
    const previous = readOrNull(at);
    fs.rmSync(at, { force: true, recursive: true });
    return { previous };
  },
  undo: ({ args, result }) => {
    if (result.previous !== null) fs.writeFileSync(args.path, result.previous);
  },
});
const readFile = defineTool<{ path: string }, { text: string | null }>({
  name: "read_file",
  run: ({ path: at }) => ({ text: readOrNull(at) }),
  undo: () => undefined,
});

/** A session whose branch deleted missing n.txt at its head, rewound (conversation) to before that call. */
async function rewound(
  call: "delete_file" | "read_file",
  named: (ws: string) => string,
  { setup, extra }: { setup?: (ws: string) => void; extra?: Record<string, unknown> } = {},
) {
  const ws = tempDir("forkpoint-noop-replay-");
  setup?.(ws);
  const { fp, path: db } = dbs.open({ tools: [deleteFile, readFile] as never[] });
  const s = await fp.createSession({ userId: "u" });
  fs.writeFileSync(path.join(ws, "a.txt"), "v0\n");
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  const branch = (await s.info()).currentBranchId;
  await s.invoke(call, { path: named(ws), ...extra }); // nothing there: changes nothing
  await s.rollback(c0.id);
  return { s, db, ws, c0, branch, at: (rel: string) => path.join(ws, rel) };
}

it("a file made by hand where the replayed call deletes: refused, the file and database unchanged", async () => {
  const { s, db, branch, at } = await rewound("delete_file", (ws) => path.join(ws, "n.txt"));
  fs.writeFileSync(at("n.txt"), "MINE\n");
  expect((await s.plan({ branchId: branch })).drift).toEqual(["n.txt"]);
  const before = await dumpOf(db);
  expect(await rejectionOf(s.switchBranch(branch))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(at("n.txt"))).toBe("MINE\n");
  expect(await dumpOf(db)).toEqual(before);
});

it("forced, the hand-made file is saved in a checkpoint first, then the replay deletes it", async () => {
  const { s, c0, branch, at } = await rewound("delete_file", (ws) => path.join(ws, "sub", "..", "n.txt"));
  fs.writeFileSync(at("n.txt"), "MINE\n");
  const moved = await s.switchBranch(branch, { force: true });
  expect(moved.savedDrift?.files).toEqual(["n.txt"]);
  expect(readOrNull(at("n.txt"))).toBeNull();
  expect((await s.diffFiles(c0.id, moved.savedDrift!.checkpointId)).patch).toContain("+MINE");
});

it("a relative path is read against the workspace too", async () => {
  const { s, branch, at } = await rewound("delete_file", () => "n.txt");
  fs.writeFileSync(at("n.txt"), "MINE\n");
  expect(await rejectionOf(s.switchBranch(branch))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(at("n.txt"))).toBe("MINE\n");
});

it("a path before many other strings in the arguments is read first (review ws7, n3)", async () => {
  const lines = Array.from({ length: 1000 }, (_, i) => `line ${i}`);
  const { s, branch, at } = await rewound("delete_file", (ws) => path.join(ws, "n.txt"), { extra: { lines } });
  fs.writeFileSync(at("n.txt"), "MINE\n");
  expect((await s.plan({ branchId: branch })).drift).toEqual(["n.txt"]);
  expect(await rejectionOf(s.switchBranch(branch))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(at("n.txt"))).toBe("MINE\n");
});

it("a path through a linked folder in the workspace reaches the file at its real path (review ws7, n2)", async () => {
  const setup = (ws: string) => {
    fs.mkdirSync(path.join(ws, "d"));
    fs.symlinkSync("d", path.join(ws, "ln"));
  };
  const { s, branch, at } = await rewound("delete_file", (ws) => path.join(ws, "ln", "n.txt"), { setup });
  fs.writeFileSync(at("d/n.txt"), "MINE\n");
  expect((await s.plan({ branchId: branch })).drift).toEqual(["d/n.txt"]);
  expect(await rejectionOf(s.switchBranch(branch))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(at("d/n.txt"))).toBe("MINE\n");
});

it("a folder the replayed call names reaches the files made by hand under it", async () => {
  const { s, branch, at } = await rewound("delete_file", (ws) => path.join(ws, "sub"));
  fs.mkdirSync(at("sub"));
  fs.writeFileSync(at("sub/n.txt"), "MINE\n");
  expect((await s.plan({ branchId: branch })).drift).toEqual(["sub/n.txt"]);
  expect(await rejectionOf(s.switchBranch(branch))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(at("sub/n.txt"))).toBe("MINE\n");
});

it("drift in a file the replayed call does not name leaves the move alone", async () => {
  const { s, branch, at } = await rewound("read_file", (ws) => path.join(ws, "n.txt"));
  fs.writeFileSync(at("a.txt"), "edited by hand\n");
  fs.writeFileSync(at("other.txt"), "made by hand\n");
  expect((await s.plan({ branchId: branch })).drift).toEqual([]);
  const moved = await s.switchBranch(branch);
  expect(moved.replayed.map((t) => t.tool)).toEqual(["read_file"]);
  expect(moved.savedDrift).toBeUndefined();
  expect(readOrNull(at("a.txt"))).toBe("edited by hand\n");
});

it("a file the replayed call read, edited by hand since, is no drift for that replay (review r17)", async () => {
  const { s, branch, at } = await rewound("read_file", (ws) => path.join(ws, "a.txt"));
  fs.writeFileSync(at("a.txt"), "edited by hand\n");
  expect((await s.plan({ branchId: branch })).drift).toEqual([]);
  const moved = await s.switchBranch(branch);
  expect(moved.replayed.map((t) => t.tool)).toEqual(["read_file"]);
  expect(readOrNull(at("a.txt"))).toBe("edited by hand\n");
});

it("a file the replayed call found missing, made by hand since, stays drift when it read it", async () => {
  const { s, branch, at } = await rewound("read_file", () => "n.txt");
  fs.writeFileSync(at("n.txt"), "MINE\n");
  expect((await s.plan({ branchId: branch })).drift).toEqual(["n.txt"]);
  expect(await rejectionOf(s.switchBranch(branch))).toMatchObject({ code: "WORKSPACE_DRIFT" });
});

it("a file made by hand before the replayed call ran, in no checkpoint, is no drift for that replay", async () => {
  const ws = tempDir("forkpoint-noop-replay-");
  const { fp } = dbs.open({ tools: [deleteFile, readFile] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  // Made by hand after the last checkpoint, then read (an upload tool given its path): the call saw it there.
  fs.writeFileSync(path.join(ws, "u.txt"), "MINE\n");
  const branch = (await s.info()).currentBranchId;
  await s.invoke("read_file", { path: path.join(ws, "u.txt") });
  await s.rollback(c0.id);
  expect((await s.plan({ branchId: branch })).drift).toEqual([]);
  expect((await s.switchBranch(branch)).replayed.map((t) => t.tool)).toEqual(["read_file"]);
  await s.rollback(c0.id);
  expect((await s.undo()).replayed.map((t) => t.tool)).toEqual(["read_file"]);
  expect(readOrNull(path.join(ws, "u.txt"))).toBe("MINE\n");
});
