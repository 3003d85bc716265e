// A recorded shell whose folder holds a file, taken back by a "conversation" rewind; then calls write that file, a hand
// edit, a call deletes it (found the hand edit), another writes it. undo() of the rewind undoes the calls (the delete's
// undo puts the hand edit back, the older write's undo deletes it) and replays the shell: the hand edit would be on no
// disk and in no call's result. Refused before the move, forced or not, as without the recorded shell. So is a rewind
// whose undo of a recorded shell, through its folder, would write over a later hand edit another undo put back.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { readOrNull, tempDir } from "../fixtures/file-tools.js";
import { put, remove, write } from "../fixtures/put-back-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

// A shell run elsewhere, recorded only: its undo puts back what the files under its folder held.
const shell = defineTool<{ cwd: string; writes: Record<string, string> }, { before: Record<string, string | null> }>({
  name: "shell",
  run: ({ cwd, writes }) => {
    const before: Record<string, string | null> = {};
    for (const [rel, text] of Object.entries(writes)) {
      before[rel] = readOrNull(path.join(cwd, rel));
      fs.writeFileSync(path.join(cwd, rel), text);
    }
    return { before };
  },
  undo: ({ args, result }) => {
    for (const [rel, text] of Object.entries(result.before)) put(path.join(args.cwd, rel), text);
  },
});

for (const force of [false, true])
  it(`undo() of a rewind: an older call's undo over a hand edit put back, a recorded shell replayed (force ${force})`, async () => {
    const ws = tempDir("forkpoint-older-over-put-back-");
    const sub = path.join(ws, "sub");
    fs.mkdirSync(sub);
    fs.writeFileSync(path.join(ws, "a.txt"), "a");
    const b = path.join(sub, "b.txt");
    const { fp } = dbs.open({ tools: [write, remove, shell] as never[] });
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    await s.append({ role: "user", content: "start" });
    const c0 = await s.checkpoint({ name: "c0" });
    fs.writeFileSync(b, "shell"); // ran elsewhere, recorded
    await s.recordToolCall({ tool: "shell", args: { cwd: sub, writes: { "b.txt": "shell" } }, result: { before: { "b.txt": null } } });
    await s.rollback(c0.id, { scope: "conversation" });
    expect(readOrNull(b)).toBeNull();
    await s.invoke("write", { path: b, text: "w1" });
    fs.writeFileSync(b, "by hand");
    await s.invoke("remove", { path: b });
    await s.invoke("write", { path: b, text: "w3" });

    const refused = await rejectionOf(s.undo({ scope: "conversation", force }));
    expect(refused).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(readOrNull(b)).toBe("w3");
    expect((await s.toolTrack()).map((t) => [t.tool, t.applied])).toEqual([
      ["write", true],
      ["remove", true],
      ["write", true],
    ]);
  });

// The same with the recorded shell the older call: its undo, through its folder, would write what it found (a hand
// edit made before it) over the later hand edit a tool call's undo put back; one of the two would be lost. A "both"
// rewind is refused the same way (it would keep the later one and take back the shell's undo: the first one lost).
for (const force of [false, true])
  it(`a rewind undoing a recorded shell over a later hand edit put back under its folder: refused (force ${force})`, async () => {
    const ws = tempDir("forkpoint-older-shell-over-put-back-");
    const a = path.join(ws, "a.txt");
    fs.writeFileSync(a, "a0");
    const { fp } = dbs.open({ tools: [write, remove, shell] as never[] });
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    await s.append({ role: "user", content: "start" });
    const c0 = await s.checkpoint({ name: "c0" });
    fs.writeFileSync(a, "first by hand");
    fs.writeFileSync(a, "shell"); // ran elsewhere, recorded
    await s.recordToolCall({
      tool: "shell",
      args: { cwd: ws, writes: { "a.txt": "shell" } },
      result: { before: { "a.txt": "first by hand" } },
    });
    fs.writeFileSync(a, "second by hand");
    await s.invoke("write", { path: a, text: "w" }); // found the second hand edit

    for (const scope of ["conversation", "both"] as const) {
      expect((await s.plan({ checkpointId: c0.id, scope })).blocked).toContain("force cannot save it first");
      const refused = await rejectionOf(s.rollback(c0.id, { scope, force }));
      expect(refused).toMatchObject({ code: "WORKSPACE_DRIFT" });
      expect(readOrNull(a)).toBe("w");
      expect((await s.toolTrack()).map((t) => [t.tool, t.applied])).toEqual([
        ["shell", true],
        ["write", true],
      ]);
    }
  });
