// A file or folder a call wrote, swapped by hand for a symbolic link: a rewind that runs the call's undo is refused, forced or not, and plan says so.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { makeTempDir, rejectionOf, removeDir, restoringWriteTool } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;

beforeEach(() => {
  dir = makeTempDir("forkpoint-link-undo-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, "b.txt"), "B\n");
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [restoringWriteTool(ws)] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

/** A session at checkpoint A, then `rel` written by two calls; `swap` then puts a link in place by hand. */
async function written(rel: string, swap: () => void) {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const a = await s.checkpoint({ name: "A" });
  await s.invoke("write_file", { rel, text: "TOOL-1\n" });
  await s.invoke("write_file", { rel, text: "TOOL-2\n" });
  swap();
  return { s, a };
}

const outsideFile = () => {
  const outside = path.join(dir, "precious.txt");
  fs.writeFileSync(outside, "PRECIOUS\n");
  return outside;
};

for (const scope of ["both", "conversation"] as const) {
  it(`a "${scope}" rewind does not write through a link to a file outside the workspace`, async () => {
    const outside = outsideFile();
    const { s, a } = await written("t.txt", () => {
      fs.rmSync(path.join(ws, "t.txt"));
      fs.symlinkSync(outside, path.join(ws, "t.txt"));
    });
    expect((await s.plan({ checkpointId: a.id, scope })).blocked).toContain("t.txt is a symbolic link");
    for (const force of [false, true]) {
      expect(await rejectionOf(s.rollback(a.id, { scope, force }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
      expect(fs.readFileSync(outside, "utf8")).toBe("PRECIOUS\n");
      expect(fs.readlinkSync(path.join(ws, "t.txt"))).toBe(outside);
    }
  });

  it(`a "${scope}" rewind does not write through a link to another file of the workspace`, async () => {
    const { s, a } = await written("t.txt", () => {
      fs.rmSync(path.join(ws, "t.txt"));
      fs.symlinkSync("b.txt", path.join(ws, "t.txt"));
    });
    expect((await s.plan({ checkpointId: a.id, scope })).blocked).toContain("t.txt is a symbolic link");
    expect(await rejectionOf(s.rollback(a.id, { scope, force: true }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(fs.readFileSync(path.join(ws, "b.txt"), "utf8")).toBe("B\n");
  });

  it(`a "${scope}" rewind does not delete through a folder swapped for a link`, async () => {
    const backup = path.join(dir, "backup");
    const { s, a } = await written("gen/t.txt", () => {
      fs.mkdirSync(backup);
      fs.writeFileSync(path.join(backup, "t.txt"), "PRECIOUS\n");
      fs.rmSync(path.join(ws, "gen"), { recursive: true });
      fs.symlinkSync(backup, path.join(ws, "gen"));
    });
    expect((await s.plan({ checkpointId: a.id, scope })).blocked).toContain("gen is a symbolic link");
    for (const force of [false, true])
      expect(await rejectionOf(s.rollback(a.id, { scope, force }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(fs.readFileSync(path.join(backup, "t.txt"), "utf8")).toBe("PRECIOUS\n");
  });
}
