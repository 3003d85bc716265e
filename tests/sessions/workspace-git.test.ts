// A git repository's own files in a workspace: a `.git` directory, and a `.git` FILE (a worktree's or a submodule's
// pointer to its repository), at any depth, are never captured, so no rewind writes or deletes them.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { filesUnder, makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;

const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws, rel), text);
};
const tree = () => filesUnder(ws, "\0");

beforeEach(() => {
  dir = makeTempDir("forkpoint-wsgit-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db") });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

describe("a .git file (a worktree's, a submodule's)", () => {
  it("is never captured, and a rewind neither deletes nor rewrites it", async () => {
    write("README.md", "one\n");
    write("vendor/lib/index.js", "lib\n");
    write("other/.git/HEAD", "ref: refs/heads/main\n");
    const s = await fp.createSession({ userId: "u" });
    expect(await s.attachWorkspace(ws)).toMatchObject({ files: 2 });
    const before = await s.checkpoint({ name: "before the worktree" });
    // `git worktree add` and `git submodule add` write these: pointers to a repository elsewhere.
    write(".git", "gitdir: /elsewhere/.git/worktrees/project\n");
    write("vendor/lib/.git", "gitdir: ../../.git/modules/lib\n");
    write("README.md", "two\n");
    expect(await s.diffFiles(before.id)).toMatchObject({ added: [], modified: ["README.md"], deleted: [] });
    const after = await s.checkpoint({ name: "after" });
    expect(await s.diffFiles(before.id, after.id)).toMatchObject({ added: [], modified: ["README.md"], deleted: [] });

    await s.rollback(before.id, { scope: "files" });
    expect(tree()).toEqual({
      ".git": "gitdir: /elsewhere/.git/worktrees/project\n",
      "README.md": "one\n",
      "other/.git/HEAD": "ref: refs/heads/main\n",
      "vendor/lib/.git": "gitdir: ../../.git/modules/lib\n",
      "vendor/lib/index.js": "lib\n",
    });
    // The pointers move on (a worktree moved): nothing to save, nothing a rewind touches.
    write(".git", "gitdir: /moved/.git/worktrees/project\n");
    await s.rollback(after.id, { scope: "files" });
    expect(tree()).toMatchObject({ ".git": "gitdir: /moved/.git/worktrees/project\n", "README.md": "two\n" });
  });

  it("is left out with gitignore: false only when excluded, as workspaces attached before it read them", async () => {
    write("a.txt", "a");
    write(".git", "gitdir: /elsewhere\n");
    const s = await fp.createSession({ userId: "u" });
    expect(await s.attachWorkspace(ws, { gitignore: false })).toMatchObject({ files: 2 });
  });
});
