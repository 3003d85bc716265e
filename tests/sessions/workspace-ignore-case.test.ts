// Ignore rules match as git matches them on the platform: on Linux by case, so `build/` and `*.log` in a .gitignore (or
// an `exclude`) leave `Build/main.c` and `RELEASE.LOG` in the workspace, captured and rewound as any file; and a
// .gitignore that is a symbolic link is not followed, as git (2.32 on) does not.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
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

beforeEach(() => {
  dir = makeTempDir("forkpoint-ignore-case-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db") });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

it.runIf(process.platform === "linux")("captures what git keeps: names that differ from a pattern by case", async () => {
  write(".gitignore", "build/\n*.log\n");
  write("Build/main.c", "int main;\n");
  write("build/main.o", "obj\n");
  write("RELEASE.LOG", "notes\n");
  write("debug.log", "noise\n");
  write("Dist/app.js", "app\n");
  write("dist/app.js", "built\n");
  // What git itself leaves out here, in a repository of the same files (core.ignorecase is false on Linux).
  execFileSync("git", ["init", "-q"], { cwd: ws });
  const kept = execFileSync("git", ["ls-files", "--others", "--exclude-standard", "--exclude=dist/"], { cwd: ws, encoding: "utf8" });
  expect(kept.split("\n").filter(Boolean).sort()).toEqual([".gitignore", "Build/main.c", "Dist/app.js", "RELEASE.LOG"]);

  const s = await fp.createSession({ userId: "u" });
  expect(await s.attachWorkspace(ws, { exclude: ["dist/"] })).toMatchObject({ files: 4 });
  const cp = await s.checkpoint({ name: "good" });
  write("Build/main.c", "BROKEN BY AGENT\n");
  write("RELEASE.LOG", "gone\n");
  write("build/main.o", "rebuilt\n");
  expect(await s.diffFiles(cp.id, "disk", { patch: false })).toMatchObject({ modified: ["Build/main.c", "RELEASE.LOG"] });
  await s.checkpoint({ name: "broken" });
  await s.rollback(cp.id, { scope: "files" });
  expect(filesUnder(ws, "\0")).toMatchObject({ "Build/main.c": "int main;\n", "RELEASE.LOG": "notes\n", "build/main.o": "rebuilt\n" });
});

it("captures what git keeps when a .gitignore is a link to rules elsewhere", async () => {
  fs.writeFileSync(path.join(dir, "shared-rules"), "notes.txt\n*.c\ngen/\n");
  fs.symlinkSync(path.join(dir, "shared-rules"), path.join(ws, ".gitignore"));
  write("lib/real-rules", "keep.md\n");
  fs.symlinkSync("real-rules", path.join(ws, "lib/.gitignore"));
  write("notes.txt", "mine\n");
  write("lib/main.c", "int main;\n");
  write("lib/keep.md", "docs\n");
  write("plain.log", "x\n");
  write("gen/out.txt", "generated\n");
  // What git leaves out here: nothing but its own directory (it warns that it cannot read the links).
  execFileSync("git", ["init", "-q"], { cwd: ws });
  const kept = execFileSync("git", ["ls-files", "--others", "--exclude-standard"], {
    cwd: ws,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  const files = ["gen/out.txt", "lib/keep.md", "lib/main.c", "lib/real-rules", "notes.txt", "plain.log"];
  expect(kept.split("\n").filter(Boolean).sort()).toEqual([".gitignore", "lib/.gitignore", ...files].sort());

  const s = await fp.createSession({ userId: "u" });
  // The two links are no files forkpoint stores; every regular file is captured.
  expect(await s.attachWorkspace(ws)).toMatchObject({ files: files.length });
  const cp = await s.checkpoint({ name: "good" });
  write("notes.txt", "BROKEN BY AGENT\n");
  write("lib/main.c", "gone\n");
  write("lib/keep.md", "changed\n");
  write("gen/out.txt", "regenerated\n");
  // gen/ is watched as any folder once forkpoint has looked at the workspace: its change is seen without a walk.
  const modified = ["gen/out.txt", "lib/keep.md", "lib/main.c", "notes.txt"];
  expect(await s.diffFiles(cp.id, "disk", { patch: false })).toMatchObject({ modified });
  await s.checkpoint({ name: "broken" });
  await s.rollback(cp.id, { scope: "files" });
  expect(filesUnder(ws, "\0")).toMatchObject({
    "notes.txt": "mine\n",
    "lib/main.c": "int main;\n",
    "lib/keep.md": "docs\n",
    "gen/out.txt": "generated\n",
  });
});
