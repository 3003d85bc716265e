// Ignore rules match as git matches them on the platform: on Linux by case, so `build/` and `*.log` in a .gitignore (or
// an `exclude`) leave `Build/main.c` and `RELEASE.LOG` in the workspace, captured and rewound as any file.
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
