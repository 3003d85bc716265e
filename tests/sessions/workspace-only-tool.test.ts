// A tool declared to act only in the workspace (`effects: "workspace"`): its call that changed no file did nothing, so a
// move restoring files that hold it marks it applied with them and never runs it again over them (review 19).
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineTool, ValidationError, type Forkpoint } from "../../src/index.js";
import { readOrNull, writeFileTool } from "../fixtures/file-tools.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
const file = (rel: string) => path.join(ws, rel);
const runs: string[] = [];

/** delete_file: removes a file, returning what it held (null: it was not there); undo writes it back. */
const deleteFile = (effects?: "workspace" | "anywhere") =>
  defineTool<{ path: string }, { previous: string | null }>({
    name: "delete_file",
    ...(effects === undefined ? {} : { effects }),
    run: (args, ctx) => {
      runs.push(ctx.replay ? "replay" : "run");
      const previous = readOrNull(args.path);
      fs.rmSync(args.path, { force: true });
      return { previous };
    },
    undo: ({ args, result }) => {
      if (result.previous !== null) fs.writeFileSync(args.path, result.previous);
    },
  });

beforeEach(() => {
  dir = makeTempDir("forkpoint-workspace-only-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  runs.length = 0;
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

it("a delete of a missing file, then a write of it: switching back restores the file and runs no delete over it", async () => {
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [deleteFile("workspace"), writeFileTool()] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("delete_file", { path: file("x") });
  await s.invoke("write_file", { path: file("x"), text: "v" });
  const written = await s.checkpoint({ name: "written" });

  await s.rollback(start.id, { scope: "both" });
  expect(readOrNull(file("x"))).toBeNull();
  const back = await s.rollback(written.id, { scope: "both" });
  expect(back.replayed).toEqual([]);
  expect(readOrNull(file("x"))).toBe("v");
  expect(runs).toEqual(["run"]);
  expect((await s.toolTrack()).map((t) => [t.tool, t.applied])).toEqual([
    ["delete_file", true],
    ["write_file", true],
  ]);
  // Nothing drifted: the next rewind goes through.
  await s.rollback(start.id, { scope: "both" });
  expect(readOrNull(file("x"))).toBeNull();
});

it("refuses an effects value it does not know", () => {
  const bad = { name: "t", run: () => null, effects: "files" } as unknown as Parameters<typeof defineTool>[0];
  const error = (() => {
    try {
      defineTool(bad);
    } catch (e) {
      return e;
    }
  })();
  expect(error).toBeInstanceOf(ValidationError);
  expect(error).toMatchObject({ code: "VALIDATION_ERROR", field: "effects" });
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db") });
});
