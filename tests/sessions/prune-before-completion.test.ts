// Issue #32: a prune another server runs between a tool call's scan (which stores the new contents) and its completion
// (which references them) deleted those contents as unreferenced; the completion then left the call's change out, and
// the next move called forkpoint's own change drift (WORKSPACE_DRIFT). The completion stores them again now.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineTool, type Forkpoint } from "../../src/index.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { aroundWrites } from "../fixtures/around-writes.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let file: string;
let fp: Forkpoint;
let other: Forkpoint;
/** Set once the tool has written its line: the writes after it are the call's scan and completion. */
let ran = false;

/** Appends a line to app.txt; its undo takes the line out again. */
const appendLine = defineTool<{ line: string }, null>({
  name: "append_line",
  run: async ({ line }) => {
    fs.appendFileSync(file, `${line}\n`);
    ran = true;
    return null;
  },
  undo: async ({ args }) =>
    fs.writeFileSync(
      file,
      fs
        .readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l !== "" && l !== args.line)
        .map((l) => `${l}\n`)
        .join(""),
    ),
});

beforeEach(() => {
  dir = makeTempDir("forkpoint-prune-before-completion-");
  ws = path.join(dir, "ws");
  fs.mkdirSync(ws);
  file = path.join(ws, "app.txt");
  const db = path.join(dir, "forkpoint.db");
  fp = openForkpoint({ path: db, tools: [appendLine] });
  other = openForkpoint({ path: db, tools: [appendLine] });
  ran = false;
});
afterEach(async () => {
  await fp.close();
  await other.close();
  removeDir(dir);
});

it("a prune by another server between a call's scan and its completion leaves no drift", async () => {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  fs.writeFileSync(file, "a\n");
  const c0 = await s.checkpoint({ name: "c0" });
  // Before every write once the tool ran (the scan's storing of the new contents, then the completion), the other
  // server prunes: what the scan stored is not referenced yet.
  let prunes = 0;
  aroundWrites(fp, "before", async () => {
    if (!ran) return false;
    await other.prune();
    prunes++;
    return false;
  });
  await s.invoke("append_line", { line: "b" });
  ran = false;
  expect(prunes).toBeGreaterThanOrEqual(2);
  expect(fs.readFileSync(file, "utf8")).toBe("a\nb\n");
  // The call's line is forkpoint's own doing: going back to c0's files (the call undone) is no drift.
  await s.rollback(c0.id, { scope: "files" });
  expect(fs.readFileSync(file, "utf8")).toBe("a\n");
});
