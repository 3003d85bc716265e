// A captured file or folder no call touches, swapped by hand for a symbolic link, does not block a "conversation" rewind.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { makeTempDir, removeDir, restoringWriteTool } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;

beforeEach(() => {
  dir = makeTempDir("forkpoint-link-elsewhere-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, "a.txt"), "A\n");
  fs.writeFileSync(path.join(ws, "b.txt"), "B\n");
  fs.mkdirSync(path.join(ws, "lib"));
  fs.writeFileSync(path.join(ws, "lib", "x.txt"), "X\n");
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [restoringWriteTool(ws)] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

const swaps = {
  "a folder": () => {
    fs.mkdirSync(path.join(dir, "elsewhere"));
    fs.writeFileSync(path.join(dir, "elsewhere", "x.txt"), "X elsewhere\n");
    fs.rmSync(path.join(ws, "lib"), { recursive: true });
    fs.symlinkSync("../elsewhere", path.join(ws, "lib"));
  },
  "a file": () => {
    fs.rmSync(path.join(ws, "b.txt"));
    fs.symlinkSync("a.txt", path.join(ws, "b.txt"));
  },
};

for (const [what, swap] of Object.entries(swaps))
  for (const force of [false, true])
    it(`${what} swapped for a link, a rewind undoing a call elsewhere goes through${force ? ", forced" : ""}`, async () => {
      const s = await fp.createSession({ userId: "u" });
      await s.attachWorkspace(ws);
      await s.append({ role: "user", content: "go" });
      const a = await s.checkpoint({ name: "A" });
      await s.invoke("write_file", { rel: "t.txt", text: "T\n" });
      swap();
      const planned = await s.plan({ checkpointId: a.id });
      expect(planned.blocked).toBeUndefined();
      expect(planned.drift).toEqual([]);
      const moved = await s.rollback(a.id, { force });
      expect(moved.undone.map((t) => t.tool)).toEqual(["write_file"]);
      expect(fs.existsSync(path.join(ws, "t.txt"))).toBe(false);
      // The link stays as the user made it.
      expect(fs.lstatSync(path.join(ws, what === "a file" ? "b.txt" : "lib")).isSymbolicLink()).toBe(true);
    });
