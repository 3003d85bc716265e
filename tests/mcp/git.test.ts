// A git repository's own files are never captured nor rewound: a `.git` directory, and a `.git` file (a worktree's or a
// submodule's pointer to its repository), at any depth, whatever --exclude says.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempDir, removeDir } from "../helpers.js";
import { connect, filesIn, ok, write, type Connected } from "./fixture.js";

let root: string;
let ws: string;
let server: Connected | undefined;

beforeEach(() => {
  root = makeTempDir("forkpoint-mcp-git-");
  ws = path.join(root, "project");
  fs.mkdirSync(ws);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(root);
});

const GIT_BEFORE = {
  ".git": "gitdir: /repos/main/.git/worktrees/project\n",
  "sub/.git": "gitdir: ../.git/modules/sub\n",
  "vendor/lib/.git/HEAD": "ref: refs/heads/main\n",
};
const GIT_AFTER = {
  ".git": "gitdir: /repos/moved/.git/worktrees/project\n",
  "sub/.git": "gitdir: ../../elsewhere/.git/modules/sub\n",
  "vendor/lib/.git/HEAD": "ref: refs/heads/feature\n",
};

describe("forkpoint mcp and git", () => {
  it("never captures nor rewinds .git, a file or a directory at any depth, even when --exclude tries to bring it back", async () => {
    for (const [rel, text] of Object.entries({ ...GIT_BEFORE, "a.txt": "one\n", "sub/s.txt": "s1\n" })) write(ws, rel, text);
    const excludes = ["!.git/", "!.git", "!**/.git", "!**/.git/**"].flatMap((p) => ["--exclude", p]);
    server = await connect("stdio", ["--workspace", ws, "--db", path.join(root, "fp.db"), "--user", "alice", ...excludes]);
    const { client } = server;
    const c0 = (await ok(client, "checkpoint", { name: "c0" })).checkpoint;

    // git rewrites its pointers (a worktree moved, a submodule's repository moved) and its HEAD.
    for (const [rel, text] of Object.entries({ ...GIT_AFTER, "a.txt": "two\n", "sub/s.txt": "s2\n" })) write(ws, rel, text);
    const diff = await ok(client, "diff", { from: c0.id, to: "disk" });
    expect(diff).toMatchObject({ to: "disk", added: [], modified: ["a.txt", "sub/s.txt"], deleted: [] });
    const plan = await ok(client, "plan_rollback", { checkpoint: "c0" });
    expect(plan).toMatchObject({ uncheckpointed: ["a.txt", "sub/s.txt"], restore: ["a.txt", "sub/s.txt"], remove: [] });

    await ok(client, "rollback", { checkpoint: "c0", force: true });
    expect(filesIn(ws)).toEqual({ ...GIT_AFTER, "a.txt": "one\n", "sub/s.txt": "s1\n" });
    await ok(client, "undo");
    expect(filesIn(ws)).toEqual({ ...GIT_AFTER, "a.txt": "two\n", "sub/s.txt": "s2\n" });
  });
});
