// Folders a restore empties: a snapshot holds files, not empty folders, so a folder the target does not hold that the
// restore's deletes left empty goes with them; one holding anything forkpoint does not capture stays, with it.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
const at = (rel: string) => path.join(ws, rel);
const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(at(rel)), { recursive: true });
  fs.writeFileSync(at(rel), text);
};

beforeEach(() => {
  dir = makeTempDir("forkpoint-empty-dirs-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db") });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

it("a rewind removes the folders its deletes emptied, and makes them again going forward", async () => {
  write("a.txt", "a\n");
  fs.mkdirSync(at("empty"));
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const a = await s.checkpoint({ name: "A" });
  write("src/lib/x.ts", "x\n");
  write("src/y.ts", "y\n");
  write("docs/guide/intro.md", "i\n");
  fs.rmSync(at("a.txt"));
  const b = await s.checkpoint({ name: "B" });

  const back = await s.rollback(a.id, { scope: "files" });
  expect(back.files).toEqual({ written: ["a.txt"], deleted: ["docs/guide/intro.md", "src/lib/x.ts", "src/y.ts"] });
  expect(fs.readdirSync(ws).sort()).toEqual(["a.txt", "empty"]);

  await s.rollback(b.id, { scope: "files" });
  expect(fs.readFileSync(at("src/lib/x.ts"), "utf8")).toBe("x\n");
  expect(fs.readdirSync(ws).sort()).toEqual(["docs", "empty", "src"]);
  expect(await s.diffFiles(b.id)).toMatchObject({ added: [], modified: [], deleted: [] });
});

it("a folder holding a file forkpoint does not capture (ignored, a link) stays, with that file", async () => {
  write("a.txt", "a\n");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws, { exclude: ["*.log"] });
  const a = await s.checkpoint({ name: "A" });
  write("build/out.js", "o\n");
  write("build/run.log", "log\n");
  write("tmp/deep/t.txt", "t\n");
  fs.symlinkSync("../a.txt", at("tmp/link"));
  await s.checkpoint({ name: "B" });

  const back = await s.rollback(a.id, { scope: "files" });
  expect(back.files?.deleted).toEqual(["build/out.js", "tmp/deep/t.txt"]);
  expect(fs.readdirSync(at("build"))).toEqual(["run.log"]);
  // The emptied folder below goes; the one holding the link stays.
  expect(fs.readdirSync(at("tmp"))).toEqual(["link"]);
  expect(fs.readdirSync(ws).sort()).toEqual(["a.txt", "build", "tmp"]);
});
