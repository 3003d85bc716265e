// Calls that turn a file into a folder and back (or a folder into a file by hand): a plan and a move over them look for
// ignore files under a name that is a file now, and find none, as git does (no raw ENOTDIR).
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineTool, type Forkpoint } from "../../src/index.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";
import { writeFileTool } from "../fixtures/file-tools.js";

let dir: string;
let ws: string;
let fp: Forkpoint;

const toFolder = defineTool({
  name: "to_folder",
  run: ({ p }: { p: string }) => {
    const prev = fs.readFileSync(p, "utf8");
    fs.rmSync(p);
    fs.mkdirSync(p);
    fs.writeFileSync(path.join(p, "inner.txt"), prev);
    return { prev };
  },
  undo: ({ args, result }) => {
    fs.rmSync(args.p, { recursive: true });
    fs.writeFileSync(args.p, (result as { prev: string }).prev);
  },
});
const toFile = defineTool({
  name: "to_file",
  run: ({ p }: { p: string }) => {
    const prev = fs.readFileSync(path.join(p, "inner.txt"), "utf8");
    fs.rmSync(p, { recursive: true });
    fs.writeFileSync(p, `${prev}!`);
    return { prev };
  },
  undo: ({ args, result }) => {
    fs.rmSync(args.p);
    fs.mkdirSync(args.p);
    fs.writeFileSync(path.join(args.p, "inner.txt"), (result as { prev: string }).prev);
  },
});

beforeEach(() => {
  dir = makeTempDir("forkpoint-file-folder-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [toFolder, toFile, writeFileTool()] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

it("a file a call made a folder and another made a file again: planned and rolled back in every scope", async () => {
  fs.writeFileSync(path.join(ws, "a.txt"), "A");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const cp0 = await s.checkpoint({ name: "cp0" });
  await s.invoke("to_folder", { p: path.join(ws, "a.txt") });
  await s.invoke("to_file", { p: path.join(ws, "a.txt") });
  for (const scope of ["files", "both", "conversation"] as const) {
    const plan = await s.plan({ checkpointId: cp0.id, scope });
    expect(plan.blocked).toBeUndefined();
  }
  const r = await s.rollback(cp0.id, { scope: "both" });
  expect(r.undone.map((t) => t.tool)).toEqual(["to_file", "to_folder"]);
  expect(fs.readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("A");
  await s.undo();
  expect(fs.readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("A!");
});

it("a folder a call wrote in, made a file by hand: planned as drift, and the move refuses it unforced", async () => {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const cp0 = await s.checkpoint({ name: "cp0" });
  fs.mkdirSync(path.join(ws, "sub"));
  await s.invoke("write_file", { path: path.join(ws, "sub", "x.txt"), text: "x" });
  fs.rmSync(path.join(ws, "sub"), { recursive: true });
  fs.writeFileSync(path.join(ws, "sub"), "made by hand");
  expect((await s.plan({ checkpointId: cp0.id, scope: "both" })).drift).toEqual(["sub"]);
  expect((await s.plan({ checkpointId: cp0.id, scope: "conversation" })).drift).toEqual(["sub/x.txt"]);
  await expect(s.rollback(cp0.id, { scope: "both" })).rejects.toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(fs.readFileSync(path.join(ws, "sub"), "utf8")).toBe("made by hand");
});
