// Restores that read more file content than the pack cache holds (8 MiB uncompressed): packs the cache held when a
// read began, pushed out by those it decompresses next, still give their contents, in one process, again and again.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

const FILES = 600; // of ~20 KB: ~12 MB of content, 3 to a pack
let dir: string;
let ws: string;
let fp: Forkpoint;

const name = (i: number) => path.join(ws, `d${i % 20}`, `f${i}.txt`);
const write = (i: number, tag: string) => fs.writeFileSync(name(i), tag + i + tag.toLowerCase().repeat(20_000));
const read = (i: number) => (fs.existsSync(name(i)) ? fs.readFileSync(name(i), "utf8").slice(0, 1) : null);

beforeEach(() => {
  dir = makeTempDir("forkpoint-pack-cache-");
  ws = path.join(dir, "project");
  for (let i = 0; i < 20; i++) fs.mkdirSync(path.join(ws, `d${i}`), { recursive: true });
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db") });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

it("a forced rewind over hand edits, then undo and redo, restore every file", async () => {
  for (let i = 0; i < FILES; i++) write(i, "A");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const a = await s.checkpoint({ name: "A" });
  for (let i = 0; i < FILES; i++)
    if (i % 3 === 0) fs.rmSync(name(i));
    else write(i, "B");
  await s.checkpoint({ name: "B" });
  for (let i = 0; i < FILES; i += 2) write(i, "D");

  const moved = await s.rollback(a.id, { scope: "both", force: true });
  expect(moved.savedDrift).toBeDefined();
  expect(new Set(Array.from({ length: FILES }, (_, i) => read(i)))).toEqual(new Set(["A"]));
  await s.undo({ scope: "both" });
  for (let i = 0; i < FILES; i++) expect(read(i)).toBe(i % 2 === 0 ? "D" : i % 3 === 0 ? null : "B");
  await s.redo({ scope: "both" });
  expect(new Set(Array.from({ length: FILES }, (_, i) => read(i)))).toEqual(new Set(["A"]));
});
