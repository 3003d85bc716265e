// diffFiles' options: the file lists alone ({ patch: false }), and a patch bounded in length ({ maxPatchChars }) whose
// cost is bounded too: a long file rewritten line by line is shown as one hunk, found in linear time, then cut (and as
// one hunk with no bound, past 2,000 changed lines).
import { applyPatch, parsePatch } from "diff";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Forkpoint, SessionHandle } from "../../src/index.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;

const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws, rel), text);
};
/** `n` lines; `changed`: every line different (a unified diff of it is slow: its length times its changed lines). */
const lines = (n: number, changed: boolean) => Array.from({ length: n }, (_, i) => `${changed ? "new" : "old"} line ${i}\n`).join("");

beforeEach(() => {
  dir = makeTempDir("forkpoint-wsdiff-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db") });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

async function changed(): Promise<{ s: SessionHandle; cp: string }> {
  for (let i = 0; i < 20; i++) write(`src/f${i}.ts`, lines(30, false));
  write("gone.txt", "gone\n");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const cp = (await s.checkpoint()).id;
  for (let i = 0; i < 20; i++) write(`src/f${i}.ts`, lines(30, true));
  fs.rmSync(path.join(ws, "gone.txt"));
  write("new.txt", "new\n");
  return { s, cp };
}

describe("diffFiles options", () => {
  it("{ patch: false } lists the changes without a patch, to the disk or to another checkpoint", async () => {
    const { s, cp } = await changed();
    const modified = Array.from({ length: 20 }, (_, i) => `src/f${i}.ts`).sort();
    const lists = { added: ["new.txt"], modified, deleted: ["gone.txt"] };
    expect(await s.diffFiles(cp, "disk", { patch: false })).toEqual({ ...lists, patch: "" });
    const next = (await s.checkpoint()).id;
    expect(await s.diffFiles(cp, next, { patch: false })).toEqual({ ...lists, patch: "" });
    const full = await s.diffFiles(cp, next);
    expect(full).toMatchObject(lists);
    expect(full.patch.length).toBeGreaterThan(5000);
    expect(full.patchTruncated).toBeUndefined();
  });

  it("{ maxPatchChars } cuts the patch by then and says so; the lists stay whole", async () => {
    const { s, cp } = await changed();
    const full = await s.diffFiles(cp);
    const cut = await s.diffFiles(cp, "disk", { maxPatchChars: 1000 });
    expect(full.patch.startsWith(cut.patch)).toBe(true);
    expect(cut.patch.length).toBeGreaterThan(500);
    expect(cut.patch.length).toBeLessThanOrEqual(1000);
    expect(cut.patchTruncated).toBe(true);
    expect([cut.added, cut.modified, cut.deleted]).toEqual([full.added, full.modified, full.deleted]);
    expect(await s.diffFiles(cp, "disk", { maxPatchChars: full.patch.length })).toEqual(full);
    expect((await s.diffFiles(cp, "disk", { maxPatchChars: 0 })).patch).toBe("");
  });

  it("a bounded patch of a long file rewritten line by line is not computed past the bound", async () => {
    write("big.txt", lines(20_000, false));
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const cp = (await s.checkpoint()).id;
    // Unbounded, this diff takes minutes (40,000 changed lines): the test's timeout stops it.
    write("big.txt", lines(20_000, true));
    const cut = await s.diffFiles(cp, "disk", { maxPatchChars: 2000 });
    expect(cut).toMatchObject({ modified: ["big.txt"], patchTruncated: true });
    // Cut at the bound, as any patch is: its start shows.
    expect(cut.patch.length).toBe(2000);
    expect(cut.patch).toContain("--- a/big.txt\n+++ b/big.txt\n@@ -1,20000 +1,20000 @@\n-old line 0\n-old line 1\n");
  });

  it("a long file rewritten fits a large bound as one hunk, found in linear time, that applies", async () => {
    const before = `head\n${lines(10_000, false)}tail`;
    const after = `head\n${lines(10_000, true)}tail`;
    write("big.txt", before);
    write("small.txt", lines(3_000, false));
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const cp = (await s.checkpoint()).id;
    write("big.txt", after);
    // A few lines changed in a long file: still the minimal hunks.
    write("small.txt", lines(3_000, false).replace("old line 1500\n", "changed\n"));
    const { patch, patchTruncated } = await s.diffFiles(cp, "disk", { maxPatchChars: 10_000_000 });
    expect(patchTruncated).toBeUndefined();
    const [big, small] = parsePatch(patch);
    expect(big!.hunks.map((h) => [h.oldStart, h.oldLines, h.newStart, h.newLines])).toEqual([[1, 10_002, 1, 10_002]]);
    expect(applyPatch(before, big!)).toBe(after);
    expect(small!.hunks.map((h) => [h.oldStart, h.oldLines, h.newStart, h.newLines])).toEqual([[1498, 7, 1498, 7]]);
  });

  it("with no bound, a change of over 2,000 lines is one hunk too (removed, then added), that applies", async () => {
    // Every other line changed: 3,000 lines removed and 3,000 added, which a minimal diff interleaves with the lines
    // kept between them, at a cost growing with the square of the changed lines.
    const before = lines(6_000, false);
    const after = before.replace(/old line (\d*[13579])\n/g, "new line $1\n");
    write("big.txt", before);
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const cp = (await s.checkpoint()).id;
    write("big.txt", after);
    for (const diff of [await s.diffFiles(cp, "disk"), await s.diffFiles(cp, (await s.checkpoint()).id)]) {
      const [big] = parsePatch(diff.patch);
      expect(big!.hunks.map((h) => [h.oldStart, h.oldLines, h.newStart, h.newLines])).toEqual([[1, 6_000, 1, 6_000]]);
      const marks = big!.hunks[0]!.lines.map((l) => l[0]).join("");
      expect(marks).toBe(` ${"-".repeat(5_999)}${"+".repeat(5_999)}`);
      expect(applyPatch(before, big!)).toBe(after);
    }
  });

  it("names a text file that is not UTF-8 (Latin-1) as binary: no patch that would not apply", async () => {
    write("latin.txt", "");
    fs.writeFileSync(path.join(ws, "latin.txt"), Buffer.from("caf\xe9\n", "latin1"));
    write("plain.txt", "one\n");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const cp = (await s.checkpoint()).id;
    fs.writeFileSync(path.join(ws, "latin.txt"), Buffer.from("caf\xe8\n", "latin1"));
    write("plain.txt", "two\n");
    const { patch, modified } = await s.diffFiles(cp, "disk");
    expect(modified.sort()).toEqual(["latin.txt", "plain.txt"]);
    expect(patch).toContain("Binary files a/latin.txt and b/latin.txt differ\n");
    expect(patch).not.toContain("\ufffd");
    expect(patch).toContain("-one\n+two\n");
  });

  it("refuses options it does not know, or a negative bound", async () => {
    const { s, cp } = await changed();
    expect(await rejectionOf(s.diffFiles(cp, "disk", { patch: "no" } as never))).toMatchObject({ code: "VALIDATION_ERROR" });
    expect(await rejectionOf(s.diffFiles(cp, "disk", { maxPatchChars: -1 }))).toMatchObject({ code: "VALIDATION_ERROR" });
    expect(await rejectionOf(s.diffFiles(cp, "disk", { context: 5 } as never))).toMatchObject({ code: "VALIDATION_ERROR" });
  });
});
