// What a workspace path is, beyond its content: the executable bit (kept, as git keeps it), and whether it is a file
// or a directory (a path that changed from one to the other is rewound like any other change).
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { filesUnder, makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;

const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws, rel), text);
};
const tree = () => filesUnder(ws, "\0");
const executable = (rel: string) => (fs.statSync(path.join(ws, rel)).mode & 0o100) !== 0;
const chmod = (rel: string, mode: number) => fs.chmodSync(path.join(ws, rel), mode);

beforeEach(() => {
  dir = makeTempDir("forkpoint-wsmode-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db") });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

describe("the executable bit", () => {
  it("is captured and restored; a change of mode alone is a change (and drift)", async () => {
    write("run.sh", "#!/bin/sh\necho hi\n");
    write("a.txt", "a\n");
    chmod("run.sh", 0o755);
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const a = await s.checkpoint({ name: "A" });

    chmod("run.sh", 0o644);
    const d = await s.diffFiles(a.id);
    expect(d).toMatchObject({ added: [], modified: ["run.sh"], deleted: [] });
    expect(d.patch).toContain("old mode 100755\nnew mode 100644\n");
    // Changed outside forkpoint: a rewind refuses to overwrite it unsaved.
    expect(await rejectionOf(s.rollback(a.id, { scope: "files" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
    const b = await s.checkpoint({ name: "B" });
    expect((await s.diffFiles(a.id, b.id)).modified).toEqual(["run.sh"]);

    chmod("a.txt", 0o755);
    write("a.txt", "a2\n");
    const c = await s.checkpoint({ name: "C" });
    const ac = await s.diffFiles(a.id, c.id);
    expect(ac.modified).toEqual(["a.txt", "run.sh"]);
    expect(ac.patch).toContain("old mode 100644\nnew mode 100755\n--- a/a.txt\n+++ b/a.txt");

    expect((await s.rollback(a.id, { scope: "files" })).files).toEqual({ written: ["a.txt", "run.sh"], deleted: [] });
    expect([executable("run.sh"), executable("a.txt")]).toEqual([true, false]);
    expect(tree()).toEqual({ "run.sh": "#!/bin/sh\necho hi\n", "a.txt": "a\n" });
    expect(await s.diffFiles(a.id)).toMatchObject({ added: [], modified: [], deleted: [] });

    await s.rollback(c.id, { scope: "files" });
    expect([executable("run.sh"), executable("a.txt")]).toEqual([false, true]);
    expect(tree()).toEqual({ "run.sh": "#!/bin/sh\necho hi\n", "a.txt": "a2\n" });
    expect(await s.diffFiles(c.id)).toMatchObject({ added: [], modified: [], deleted: [] });
    expect(await fp.verify()).toMatchObject({ ok: true });
  });

  it("a new executable file is written executable; the same content under either mode is stored once", async () => {
    write("a.txt", "a\n");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const a = await s.checkpoint();
    write("bin/tool", "same\n");
    write("bin/copy", "same\n");
    chmod("bin/tool", 0o700);
    const b = await s.checkpoint();
    await s.rollback(a.id, { scope: "files" });
    expect(fs.existsSync(path.join(ws, "bin/tool"))).toBe(false);
    await s.rollback(b.id, { scope: "files" });
    expect([executable("bin/tool"), executable("bin/copy")]).toEqual([true, false]);
    expect(await fp.prune()).toBeDefined();
    expect(await fp.verify()).toMatchObject({ ok: true });
    expect(await s.diffFiles(b.id)).toMatchObject({ added: [], modified: [], deleted: [] });
  });
});

describe("the other permission bits", () => {
  const modeOf = (rel: string) => fs.statSync(path.join(ws, rel)).mode & 0o777;

  it("a file a restore replaces keeps its own (0600, 0640, 0664), with the snapshot's executable bit", async () => {
    const old = process.umask(0o022);
    try {
      write("secret", "s1\n");
      write("shared", "g1\n");
      write("team", "t1\n");
      write("tool.sh", "x1\n");
      chmod("secret", 0o600);
      chmod("shared", 0o640);
      chmod("team", 0o664);
      chmod("tool.sh", 0o750);
      const s = await fp.createSession({ userId: "u" });
      await s.attachWorkspace(ws);
      const a = await s.checkpoint({ name: "A" });
      write("secret", "s2\n");
      write("shared", "g2\n");
      write("team", "t2\n");
      write("tool.sh", "x2\n");
      chmod("tool.sh", 0o640);
      const b = await s.checkpoint({ name: "B" });

      const back = await s.rollback(a.id, { scope: "files" });
      expect(back.files?.written).toEqual(["secret", "shared", "team", "tool.sh"]);
      expect(tree()).toEqual({ secret: "s1\n", shared: "g1\n", team: "t1\n", "tool.sh": "x1\n" });
      expect([modeOf("secret"), modeOf("shared"), modeOf("team"), modeOf("tool.sh")]).toEqual([0o600, 0o640, 0o664, 0o750]);
      await s.rollback(b.id, { scope: "files" });
      expect([modeOf("secret"), modeOf("shared"), modeOf("team"), modeOf("tool.sh")]).toEqual([0o600, 0o640, 0o664, 0o640]);
      // What forkpoint saw after them is what is there: no drift.
      expect(await s.diffFiles(b.id)).toMatchObject({ added: [], modified: [], deleted: [] });
      await s.rollback(a.id, { scope: "files" });
    } finally {
      process.umask(old);
    }
  });
});

describe("a path that changed from a directory to a file, or back", () => {
  it("is rewound both ways, with force too; what forkpoint never captured in the way refuses the move", async () => {
    write("lib/a.js", "a\n");
    write("lib/deep/b.js", "b\n");
    write("x", "x as a file\n");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws, { exclude: ["*.log"] });
    const dirs = await s.checkpoint({ name: "lib a directory, x a file" });
    fs.rmSync(path.join(ws, "lib"), { recursive: true });
    write("lib", "lib as a file\n");
    fs.rmSync(path.join(ws, "x"));
    write("x/inside.txt", "inside\n");
    const files = await s.checkpoint({ name: "lib a file, x a directory" });

    await s.rollback(dirs.id, { scope: "files" });
    expect(tree()).toEqual({ "lib/a.js": "a\n", "lib/deep/b.js": "b\n", x: "x as a file\n" });
    await s.rollback(files.id, { scope: "files" });
    expect(tree()).toEqual({ lib: "lib as a file\n", "x/inside.txt": "inside\n" });

    // Changed again by hand, unsaved: refused, then forced (saved first, then rewound).
    fs.rmSync(path.join(ws, "lib"));
    write("lib/c.js", "c\n");
    expect(await rejectionOf(s.rollback(dirs.id, { scope: "files" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
    const forced = await s.rollback(dirs.id, { scope: "files", force: true });
    expect(tree()).toEqual({ "lib/a.js": "a\n", "lib/deep/b.js": "b\n", x: "x as a file\n" });
    await s.rollback(forced.savedDrift!.checkpointId, { scope: "files" });
    expect(tree()).toEqual({ "lib/c.js": "c\n", "x/inside.txt": "inside\n" });

    // A file forkpoint does not capture (excluded) inside the directory a file must replace: refused, kept.
    write("x/notes.log", "mine\n");
    const e = await rejectionOf(s.rollback(dirs.id, { scope: "files" }));
    expect(e).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(e.message).toContain("x/notes.log");
    expect(tree()).toEqual({ "lib/c.js": "c\n", "x/inside.txt": "inside\n", "x/notes.log": "mine\n" });
  });
});
